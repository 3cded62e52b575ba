package report

import (
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/internal/safetext"
)

// SuspectRule is the SARIF rule of a leak suspect: a suspicion, not a
// violation, so its level is "warning" however the run's gate treats it.
const SuspectRule = "leak-suspect"

const suspectRuleText = "a site whose live blocks grow by a steady amount every iteration of a loop and are never freed"

// Suspects is one file's search for leak suspects (package
// check/suspect): its result, or the error that stopped it.
type Suspects struct {
	File   string
	Result *suspect.Result
	Err    error
}

// WriteSuspects writes each file's suspects in format f: text (a heading
// per file where there are several), JSON (one object; one a line with a
// "file" field where there are several) or SARIF (one log, one result a
// suspect). JUnit has no place for them and writes nothing.
func WriteSuspects(w io.Writer, f Format, files []Suspects, colour bool) {
	switch f {
	case SARIF:
		writeSuspectsSARIF(w, files)
	case JSON:
		for _, s := range files {
			line := suspectsJSON{Result: s.Result}
			if len(files) > 1 || s.Err != nil {
				line.File = s.File
			}
			if s.Err != nil {
				line.Error, line.Result = s.Err.Error(), nil
			}
			writeJSON(w, line, false)
		}
	case Text:
		st := newStyle(colour)
		for i, s := range files {
			if len(files) > 1 {
				if i > 0 {
					fmt.Fprintln(w)
				}
				writeHeading(w, s.File, colour)
			}
			if s.Err != nil {
				fmt.Fprintf(w, "%s: %s\n", st.err+"ERROR"+st.reset, safetext.Escape(s.Err.Error()))
				continue
			}
			writeSuspectsText(w, s.Result, st)
		}
	}
}

// suspectsJSON is one file's line: the Result's own shape, with the file
// and an error where they apply.
type suspectsJSON struct {
	File  string `json:"file,omitempty"`
	Error string `json:"error,omitempty"`
	*suspect.Result
}

func writeSuspectsText(w io.Writer, r *suspect.Result, st style) {
	for _, s := range r.Suspects {
		fmt.Fprintf(w, "%s: %s keeps %s (%s) every iteration\n", st.warn+"LEAK SUSPECT"+st.reset, safetext.Escape(s.Site),
			plural.Count(s.BlocksPerIteration, "block"), bytesText(s.BytesPerIteration))
		fmt.Fprintf(w, "  seen in %d of %d complete iterations (from iteration %d), %.0f%% of them alike: %s confidence\n",
			s.IterationsSeen, s.Complete, s.FirstIteration, 100*s.Steadiness, s.Confidence)
		fmt.Fprintf(w, "  kept: %s, %s\n", plural.Count(s.Blocks, "block"), bytesText(s.Bytes))
		for _, b := range s.Evidence {
			fmt.Fprintf(w, "    made at event %d: %s at %s, iteration %d\n", b.Event, bytesText(b.Size), b.Addr, b.Iteration)
		}
		if len(s.Stack) > 0 {
			fmt.Fprintf(w, "  made by:\n")
			for _, f := range s.Stack {
				fmt.Fprintf(w, "    %s  %s:%d\n", safetext.Escape(f.Name), safetext.Escape(f.File), f.Line)
			}
		}
	}
	it := r.Iteration
	marker := safetext.Escape(it.Site)
	if it.Annotation != "" {
		marker = "each " + safetext.Escape(it.Annotation) + " annotation"
	}
	if marker == "" {
		fmt.Fprintf(w, "SUMMARY: no leak suspect: %s\n", it.Reason)
		return
	}
	how := "detected"
	if it.Named {
		how = "named"
	}
	fmt.Fprintf(w, "SUMMARY: %s; iterations begin at %s (%s; %d seen, %s each in %.0f%% of them)\n",
		plural.Count(len(r.Suspects), "leak suspect"), marker, how, it.Count,
		plural.Count(it.Allocations, "allocation"), 100*it.Steadiness)
	if it.Reason != "" {
		fmt.Fprintf(w, "  %s\n", it.Reason)
	}
}

func bytesText(n uint64) string { return plural.Count(n, "byte") }

func writeSuspectsSARIF(w io.Writer, files []Suspects) {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "tlcheck", InformationURI: "https://github.com/tlcheck/tlcheck",
			Rules: []sarifRule{{ID: SuspectRule, ShortDescription: sarifText{suspectRuleText}, Default: sarifConfig{"warning"}}}}},
		Invocations: []sarifInvocation{{ExecutionSuccessful: true, Notifications: []sarifNotification{}}},
		Results:     []sarifResult{},
	}
	for _, f := range files {
		if f.Err != nil {
			run.Invocations[0].ExecutionSuccessful = false
			run.Invocations[0].Notifications = append(run.Invocations[0].Notifications,
				sarifNotification{Level: "error", Message: sarifText{f.Err.Error()}})
			continue
		}
		for i := range f.Result.Suspects {
			run.Results = append(run.Results, suspectResult(&f.Result.Suspects[i], f.File, "warning"))
		}
	}
	writeJSON(w, sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}}, true)
}

// suspectResult is a suspect of trace as a SARIF result of level level,
// its evidence as related locations.
func suspectResult(s *suspect.Suspect, trace, level string) sarifResult {
	msg := fmt.Sprintf("%s keeps %s (%s) every iteration, in %d of %d complete iterations (%s confidence)",
		s.Site, plural.Count(s.BlocksPerIteration, "block"), bytesText(s.BytesPerIteration), s.IterationsSeen, s.Complete, s.Confidence)
	res := sarifResult{RuleID: SuspectRule, Level: level, Message: sarifText{msg},
		Locations:           []sarifLocation{siteLocation(s.Site, trace, 0, nil, 0)},
		PartialFingerprints: map[string]string{fingerprintKey: SuspectRule + "|" + s.Site},
		Properties:          sarifProperties{Trace: trace, Event: -1, Addr: "0x0"}}
	for i, b := range s.Evidence {
		m := sarifText{fmt.Sprintf("kept block: event %d, %s at %s, iteration %d", b.Event, bytesText(b.Size), b.Addr, b.Iteration)}
		res.RelatedLocations = append(res.RelatedLocations, siteLocation("", trace, 0, &m, i+1))
	}
	if len(s.Evidence) > 0 {
		res.Properties.Event, res.Properties.Addr = s.Evidence[0].Event, s.Evidence[0].Addr.String()
	}
	return res
}
