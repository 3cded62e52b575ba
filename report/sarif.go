package report

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/exitcode"
	"github.com/tlcheck/tlcheck/traces"
)

// SARIF 2.1.0 (https://docs.oasis-open.org/sarif/sarif/v2.1.0/), the
// format code-scanning systems ingest. One run holds every file: one
// result per violation (ruleId: its kind), located at its event's site
// and with its history as related locations. Suppressed violations are
// results with an external suppression, so that a viewer shows them as
// dismissed, not as gone; under a gate each result has a baselineState.
// What concerns a file rather than a line (unreadable input, a trace
// without end, totals grown beyond the tolerance, fixed findings) goes to
// the invocation's toolExecutionNotifications.

const sarifSchema = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"

// fingerprintKey names tlcheck's fingerprint in partialFingerprints.
const fingerprintKey = "tlcheckFingerprint/v1"

// ruleText is a one-line description of each kind, from the contract.
var ruleText = map[traces.Kind]string{
	traces.DoubleFree:     "free, release, dev_free or pool_put of something already dead",
	traces.UseAfterFree:   "an op or access on a dead object, block, arena buffer or pool block",
	traces.InvalidAddress: "an op or access on an address that never held anything in that space",
	traces.PrematureFree:  "the runtime freed an object that still has references",
	traces.StaleReuse:     "an action meant for an address's earlier owner hit the new one",
	traces.Leak:           "at end, something still allocated that nothing reaches",
	traces.Overlap:        "an allocation whose range meets a live allocation of the same kind",
	traces.Misuse:         "a broken protocol: scopes, frames, records or params used wrongly",
	traces.SavedModified:  "a saved tensor unpacked at another version than it was saved at",
	traces.CountMismatch:  "a reference count the runtime states that is not the model's",
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string      `json:"id"`
	ShortDescription sarifText   `json:"shortDescription"`
	Default          sarifConfig `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	RelatedLocations    []sarifLocation    `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	BaselineState       string             `json:"baselineState,omitempty"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Properties          sarifProperties    `json:"properties"`
}

// sarifProperties say where in the trace a result was found.
type sarifProperties struct {
	Trace  string `json:"trace"`
	Event  int    `json:"event"`
	Line   int    `json:"line,omitempty"`
	Addr   string `json:"addr"`
	Object int    `json:"object,omitempty"`
}

type sarifLocation struct {
	ID               *int           `json:"id,omitempty"`
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	Message          *sarifText     `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool                `json:"executionSuccessful"`
	ExitCode            int                 `json:"exitCode"`
	Notifications       []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

// writeSARIF writes every outcome as one SARIF log.
func writeSARIF(w io.Writer, outs []check.Outcome, p *check.Policy, info Run) {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:           "tlcheck",
			InformationURI: "https://github.com/tlcheck/tlcheck",
		}},
		Results: []sarifResult{},
	}
	index := make(map[traces.Kind]int)
	for i, k := range traces.Kinds() {
		index[k] = i
		level := "error"
		if !p.Fails(k) {
			level = "warning"
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules,
			sarifRule{ID: string(k), ShortDescription: sarifText{ruleText[k]}, Default: sarifConfig{level}})
	}
	suspectRule, suspectLevel := -1, "warning"
	if p.FailsSuspects() {
		suspectLevel = "error"
	}
	if p.FailsSuspects() || slices.ContainsFunc(outs, func(o check.Outcome) bool { return len(o.Suspects) > 0 }) {
		suspectRule = len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules,
			sarifRule{ID: SuspectRule, ShortDescription: sarifText{suspectRuleText}, Default: sarifConfig{suspectLevel}})
	}

	inv := sarifInvocation{ExecutionSuccessful: true, ExitCode: 0, Notifications: []sarifNotification{}}
	note := func(level, file, text string) {
		n := sarifNotification{Level: level, Message: sarifText{text}}
		if file != "" {
			n.Locations = []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: sarifArtifact{fileURI(file)}}}}
		}
		inv.Notifications = append(inv.Notifications, n)
	}
	for i := range outs {
		o := &outs[i]
		inv.ExitCode = max(inv.ExitCode, exitcode.For(o.Status(p)))
		if o.Err != nil {
			inv.ExecutionSuccessful = false
			note("error", o.File, o.Err.Error())
			continue
		}
		seen := make(map[check.Fingerprint]int) // occurrences so far, per fingerprint
		for j := range o.Report.Violations {
			v := &o.Report.Violations[j]
			fp := check.FingerprintOf(v)
			seen[fp]++
			ri, ok := index[v.Kind]
			if !ok {
				ri = -1 // a kind beyond the contract's: no rule to point at
			}
			r := sarifResult{
				RuleID:              string(v.Kind),
				RuleIndex:           ri,
				Level:               "error",
				Message:             sarifText{v.Message},
				Locations:           []sarifLocation{siteLocation(v.Site, o.File, v.Line, nil, 0)},
				PartialFingerprints: map[string]string{fingerprintKey: fp.Hash() + ":" + strconv.Itoa(seen[fp])},
				Properties:          sarifProperties{Trace: o.File, Event: v.Event, Line: v.Line, Addr: v.Addr.String(), Object: v.Object},
			}
			if r.Message.Text == "" {
				r.Message.Text = string(v.Kind) // SARIF demands a text
			}
			if !p.Fails(v.Kind) {
				r.Level = "warning"
			}
			for k, rel := range v.Related {
				id := k + 1
				msg := &sarifText{fmt.Sprintf("%s here: event %d", rel.What, rel.Event)}
				r.RelatedLocations = append(r.RelatedLocations, siteLocation(rel.Site, o.File, rel.Line, msg, id))
			}
			if rule := o.By[j]; rule != nil {
				r.Suppressions = []sarifSuppression{{Kind: "external", Justification: "suppressed by " + rule.String()}}
			}
			if o.Gated {
				r.BaselineState = "new"
				if o.Known[j] {
					r.BaselineState = "unchanged"
				}
			}
			run.Results = append(run.Results, r)
		}
		for j := range o.Suspects {
			r := suspectResult(&o.Suspects[j], o.File, suspectLevel)
			r.RuleIndex = suspectRule
			if o.Gated {
				r.BaselineState = "new"
				if o.SuspectKnown[j] {
					r.BaselineState = "unchanged"
				}
			}
			run.Results = append(run.Results, r)
		}
		switch {
		case o.IncompleteFails(p):
			note("error", o.File, check.RequireEndMessage(o.File))
		case !o.Report.Complete && o.Snapshot:
			note("warning", o.File, o.File+": a memory snapshot is taken mid-run: what it still holds is live, not leaked, so no leak check ran")
		case !o.Report.Complete:
			note("warning", o.File, o.File+": the trace stops without an end event, so no leak check ran")
		}
		for _, g := range o.Growth {
			if g.Exceeded() {
				note("error", o.File, o.File+": "+g.String())
			}
		}
		for _, f := range o.Fixed {
			note("note", o.File, fmt.Sprintf("%s: fixed: %s, %d fewer than the baseline accepts", o.File, f.Fingerprint, f.Count))
		}
		if o.Gated && !o.InBaseline {
			note("note", o.File, o.File+": not in the baseline "+info.Baseline+": every finding is new")
		}
	}
	for _, n := range info.Notes {
		note("note", "", n)
	}
	run.Invocations = []sarifInvocation{inv}

	writeJSON(w, sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}}, true)
}

// siteRE is a site of the form file:line or file:line:column.
var siteRE = regexp.MustCompile(`^(.+?):([0-9]+)(?::([0-9]+))?$`)

// parseSite splits a site into its file, line and column (0 if none); ok
// is false where the site is no file:line (an mtrace site such as
// ./prog:[0x11ce], or none at all).
func parseSite(site string) (file string, line, col int, ok bool) {
	m := siteRE.FindStringSubmatch(site)
	if m == nil {
		return "", 0, 0, false
	}
	line, err := strconv.Atoi(m[2])
	if err != nil || line < 1 {
		return "", 0, 0, false
	}
	if m[3] != "" {
		col, _ = strconv.Atoi(m[3])
	}
	return m[1], line, col, true
}

// siteLocation is where a SARIF viewer should point for an event: its
// site where that is file:line, or else the trace file at the event's line
// (the trace is the only text that holds the event then).
// id numbers a related location (from 1); 0 leaves it out.
func siteLocation(site, trace string, traceLine int, msg *sarifText, id int) sarifLocation {
	loc := sarifLocation{Message: msg}
	if id > 0 {
		loc.ID = &id
	}
	if file, line, col, ok := parseSite(site); ok {
		loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{fileURI(file)}, Region: &sarifRegion{line, col}}
		return loc
	}
	loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: sarifArtifact{fileURI(trace)}}
	if traceLine > 0 {
		loc.PhysicalLocation.Region = &sarifRegion{StartLine: traceLine}
	}
	return loc
}

// fileURI turns a path into a relative or absolute URI reference, with
// the characters a URI cannot hold escaped.
func fileURI(path string) string {
	return (&url.URL{Path: filepath.ToSlash(path)}).String()
}
