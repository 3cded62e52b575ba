package properties

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/leanovate/gopter/gen"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
)

// stepCommand is one call as a gopter command: Run applies it to the
// runtime and the model (the system under test is a session holding both)
// and PostCondition fails on a state difference or any breach.
type stepCommand struct{ step flat.Step }

// observation is what running one command showed.
type observation struct {
	diff   string  // cmp.Diff of the runtime's state and the model's, "" if equal
	breach *Breach // the first breach so far, nil if none
}

func (c stepCommand) Run(sut commands.SystemUnderTest) commands.Result {
	s := sut.(*session)
	s.apply(c.step)
	b, _ := check(s.res)
	return observation{diff: cmp.Diff(s.rt.State(), s.chk.State(), stateOpts), breach: b}
}

// NextState advances the program's shape (scope depth, registered names),
// which the decoder uses to keep most generated calls well formed. The
// shape only weights generation: operands are positions among what is
// alive, resolved when the command runs, so every subsequence that
// gopter's shrinker tries is a valid program too.
func (c stepCommand) NextState(st commands.State) commands.State {
	return st.(flat.Shape).After(c.step)
}
func (c stepCommand) PreCondition(commands.State) bool { return true }
func (c stepCommand) String() string                   { return c.step.String() }

func (c stepCommand) PostCondition(_ commands.State, res commands.Result) *gopter.PropResult {
	o := res.(observation)
	switch {
	case o.breach != nil:
		return &gopter.PropResult{Status: gopter.PropFalse, Labels: []string{o.breach.Error()}}
	case o.diff != "":
		return &gopter.PropResult{Status: gopter.PropFalse, Labels: []string{"state differs (-runtime +model):\n" + o.diff}}
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}

// gopterCommands is the state-machine property in gopter's terms. Commands
// are drawn through the program decoder (the same op weights as Generate).
// gopter has no end-of-run hook that can fail a property: the last point
// with the system under test in hand is DestroySystemUnderTest, which runs
// inside gopter's recovered check, so a panic there is how the end-of-run
// properties (teardown, end, replay) fail the run and get shrunk.
func gopterCommands(cfg impl.Config) *commands.ProtoCommands {
	return &commands.ProtoCommands{
		NewSystemUnderTestFunc: func(commands.State) commands.SystemUnderTest {
			return newSession(cfg, Program{})
		},
		DestroySystemUnderTestFunc: func(sut commands.SystemUnderTest) {
			s := sut.(*session)
			if b, _ := check(s.finish()); b != nil {
				panic(b)
			}
		},
		InitialStateGen: gen.Const(flat.Shape{}),
		GenCommandFunc: func(st commands.State) gopter.Gen {
			return gen.SliceOfN(6, gen.UInt8()).Map(func(b []uint8) commands.Command {
				return stepCommand{flat.DecodeStep(b, st.(flat.Shape))}
			})
		},
	}
}

// gopterRun checks the gopter property with seed and reports whether it
// held, and the result gopter gave.
func gopterRun(cfg impl.Config, seed int64, tests int) (bool, *gopter.TestResult) {
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = tests
	params.MaxSize = 40
	params.MaxShrinkCount = 200
	props := gopter.NewProperties(params)
	props.Property("runtime refines model", commands.Prop(gopterCommands(cfg)))
	rep := &lastResult{}
	ok := props.Run(rep)
	return ok, rep.result
}

// lastResult is a silent gopter reporter that keeps the result.
type lastResult struct{ result *gopter.TestResult }

func (r *lastResult) ReportTestResult(_ string, res *gopter.TestResult) { r.result = res }

func TestGopterRefines(t *testing.T) {
	for _, reuse := range []impl.Reuse{impl.ReuseLIFO, impl.ReuseFIFO} {
		t.Run(reuseName(reuse), func(t *testing.T) {
			ok, res := gopterRun(impl.Config{Reuse: reuse}, 1, 100)
			if !ok {
				var b strings.Builder
				gopter.NewFormatedReporter(true, 160, &b).ReportTestResult("runtime refines model", res)
				t.Fatal(b.String())
			}
		})
	}
}
