package lang

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// liveShapes are the shapes of liveness around loops: a variable declared
// outside a loop and used inside it is live to that loop's end, whichever
// loop it is (the first, a later one, one nested in another, one in an
// if's branch or a block expression), whatever leaves the loop's body
// early. want gives the lifetimes of some of the function's slot
// variables (by their names in the trace), in statements numbered in
// source order from 0 (nested bodies after the statement that holds
// them), as the numbers in the comments count.
var liveShapes = []struct {
	name string
	fn   int // the function whose lives are checked
	src  string
	want map[string][2]int // first and last statement
}{
	{"second-loop", 0, `
fn main() {
    let v1 = zeros(32);           // 0
    for i0 in 0..1 {              // 1
        let v2 = v1;              // 2
    }
    for i0 in 0..2 {              // 3
        let v3 = add(v1);         // 4
        let v4 = zeros(32);       // 5
    }
}`, map[string][2]int{"v1": {0, 5}, "v3": {4, 4}, "v4": {5, 5}}},
	{"second-loop-block-expression", 0, `
fn main() {
    let v2 = zeros(64);           // 0
    for i0 in 0..1 {              // 1
        let v6 = add(v2);         // 2
    }
    for i0 in 0..2 {              // 3
        let v7 = {                // 4
            let v9 = zeros(16);   // 5
            let v10 = add(v2, v2);// 6
            let v11 = zeros(32);  // 7
            v9
        };
    }
}`, map[string][2]int{"v2": {0, 7}, "v9": {5, 7}, "v11": {7, 7}}},
	{"nested-loops", 0, `
fn main() {
    let a = zeros(16);            // 0
    for i0 in 0..2 {              // 1
        for i1 in 0..2 {          // 2
            let b = add(a);       // 3
        }
    }
    for i0 in 0..2 {              // 4
        let c = zeros(16);        // 5
        for i1 in 0..2 {          // 6
            let d = add(a);       // 7
            let e = zeros(16);    // 8
        }
        let f = zeros(16);        // 9
    }
}`, map[string][2]int{"a": {0, 9}, "c": {5, 5}, "d": {7, 7}}},
	{"inner-loops-of-one-loop", 0, `
fn main() {
    for i0 in 0..2 {              // 0
        let a = zeros(16);        // 1
        for i1 in 0..2 {          // 2
            let b = add(a);       // 3
        }
        for i1 in 0..2 {          // 4
            let c = add(a);       // 5
            let d = zeros(16);    // 6
        }
        let e = zeros(16);        // 7
    }
}`, map[string][2]int{"a": {1, 6}, "e": {7, 7}}},
	{"continue-and-break", 0, `
fn main() {
    let a = zeros(16);            // 0
    for i0 in 0..1 {              // 1
        let b = add(a);           // 2
    }
    for i0 in 0..3 {              // 3
        if i0 == 1 {              // 4
            let c = add(a);       // 5
            continue;             // 6
        }
        let d = zeros(16);        // 7
        if i0 == 2 {              // 8
            break;                // 9
        }
        let e = zeros(16);        // 10
    }
}`, map[string][2]int{"a": {0, 10}, "d": {7, 7}, "e": {10, 10}}},
	{"early-return", 1, `
fn main() {
    let r = f1();
}
fn f1() -> Tensor {
    let a = zeros(16);            // 0
    for i0 in 0..1 {              // 1
        let b = add(a);           // 2
    }
    for i0 in 0..2 {              // 3
        let c = add(a);           // 4
        if i0 == 1 {              // 5
            return c;             // 6
        }
        let d = zeros(16);        // 7
    }
    let z = zeros(16);            // 8
    return z;                     // 9
}`, map[string][2]int{"a": {0, 7}, "c": {4, 6}, "z": {8, 9}}},
	{"loops-in-both-branches", 0, `
fn main() {
    let a = zeros(16);            // 0
    if true {                     // 1
        for i0 in 0..1 {          // 2
            let b = add(a);       // 3
        }
    } else {
        for i0 in 0..2 {          // 4
            let c = add(a);       // 5
            let d = zeros(16);    // 6
        }
    }
}`, map[string][2]int{"a": {0, 6}}},
	{"assigned-in-two-loops", 0, `
fn main() {
    let a = zeros(16);            // 0
    let t = zeros(16);            // 1
    for i0 in 0..1 {              // 2
        t = add(a);               // 3
    }
    for i0 in 0..2 {              // 4
        t = add(a);               // 5
        let d = zeros(16);        // 6
    }
}`, map[string][2]int{"a": {0, 6}, "t": {1, 6}}},
	{"loop-in-block-expression", 0, `
fn main() {
    let a = zeros(16);            // 0
    for i0 in 0..1 {              // 1
        let b = add(a);           // 2
    }
    let x = {                     // 3
        let y = zeros(16);        // 4
        for i0 in 0..2 {          // 5
            let c = add(a);       // 6
            let d = zeros(16);    // 7
        }
        y
    };
}`, map[string][2]int{"a": {0, 7}, "y": {4, 7}}},
	{"struct-destination", 0, `
struct Box { f0: Tensor }
fn main() {
    let s = f1();                 // 0
    for i0 in 0..1 {              // 1
        let a = s.f0;             // 2
    }
    for i0 in 0..2 {              // 3
        let b = s.f0;             // 4
        let c = zeros(16);        // 5
    }
}
fn f1() -> Box {
    let t = zeros(16);
    let b = Box { f0: t };
    return b;
}`, map[string][2]int{"s": {0, 5}, "c": {5, 5}}},
}

// TestLoopLiveness: the lifetimes the planner is given keep every
// variable used in a loop it is declared outside of live to the loop's
// end, and the plan gives no two variables live at once the same slot.
func TestLoopLiveness(t *testing.T) {
	for _, c := range liveShapes {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(p); err != nil {
				t.Fatal(err)
			}
			f := analyze(p, p.Funcs[c.fn], false)
			got := map[string]impl.Interval{}
			for i, n := range f.names {
				got[n] = f.lives[i]
			}
			for name, w := range c.want {
				if want := (impl.Interval{First: w[0], Last: w[1]}); got[name] != want {
					t.Errorf("%s lives %v, want %v", name, got[name], want)
				}
			}
			plan, err := impl.PlanFrame(f.lives)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range f.lives {
				for j, b := range f.lives[:i] {
					if plan.Slots[i] == plan.Slots[j] && a.First <= b.Last && b.First <= a.Last {
						t.Errorf("%s %v and %s %v share slot %d", f.names[i], a, f.names[j], b, plan.Slots[i])
					}
				}
			}
			if d := run(t, p); d != "" {
				t.Errorf("the lowering differs from the program: %s", d)
			}
			// Each shape is one the old analysis got wrong: with
			// loop-life-ends-first-loop, some lifetime above is shorter.
			bad := analyze(p, p.Funcs[c.fn], true)
			differs := false
			for i, n := range bad.names {
				if _, ok := c.want[n]; ok && bad.lives[i] != got[n] {
					differs = true
				}
			}
			if !differs {
				t.Errorf("loop-life-ends-first-loop gives the same lifetimes: the shape cannot fail")
			}
			if t.Failed() {
				t.Logf("lives %v\n%s", got, strings.TrimSpace(c.src))
			}
		})
	}
}
