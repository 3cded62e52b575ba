package autograd

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGenerate: programs are the same for the same seed, end with end,
// name only handles made before, and have every call of the wire, and
// no_grad, many times.
func TestGenerate(t *testing.T) {
	a := Generate(rand.New(rand.NewPCG(7, 1)))
	b := Generate(rand.New(rand.NewPCG(7, 1)))
	if !slices.EqualFunc(a, b, SameCall) {
		t.Fatal("the same seed gave two programs")
	}
	rng := rand.New(rand.NewPCG(8, 1))
	seen := map[Op]int{}
	for range 500 {
		p := Generate(rng)
		if p[len(p)-1].Op != End {
			t.Fatalf("a program ends with %s", p[len(p)-1].Op)
		}
		made := map[int]bool{}
		for i, c := range p {
			seen[c.Op]++
			if c.NoGrad {
				seen["no_grad"]++
			}
			if !c.Op.IsCall() {
				t.Fatalf("call %d: %s is no layer-5 call", i, c.Op)
			}
			for _, h := range []int{c.A, c.B, c.Target} {
				if h != 0 && !made[h] && c.Uses(map[int]bool{h: true}) {
					t.Fatalf("call %d %+v names handle %d, not made before", i, c, h)
				}
			}
			if c.Op.Makes() {
				made[c.Handle] = true
			}
		}
	}
	for _, op := range append(Ops(Wire), "no_grad") {
		if seen[op] < 20 {
			t.Errorf("%s in %d calls of 500 programs", op, seen[op])
		}
	}
}

// TestGenerateSteps: the same seed draws the same in-process program, of
// steps of every kind (episodes among them), checkpointed or not, under
// either lifetime.
func TestGenerateSteps(t *testing.T) {
	a, ca, la := GenerateSteps(rand.New(rand.NewPCG(7, 1)))
	b, cb, lb := GenerateSteps(rand.New(rand.NewPCG(7, 1)))
	if !slices.Equal(a, b) || ca != cb || la != lb {
		t.Fatal("the same seed gave two programs")
	}
	rng := rand.New(rand.NewPCG(8, 1))
	kinds := map[int]bool{}
	var ckpt, lifetimes [2]int
	for range 300 {
		steps, c, lt := GenerateSteps(rng)
		if len(steps) == 0 || lt < 0 || lt > 1 {
			t.Fatalf("%d steps, lifetime %d", len(steps), lt)
		}
		for _, s := range steps {
			if s.Kind < 0 || s.Kind >= len(Kinds) || s.A < 0 || s.A >= Operands || s.B < 0 || s.B >= Operands {
				t.Fatalf("step %+v out of range", s)
			}
			kinds[s.Kind] = true
		}
		if c {
			ckpt[1]++
		} else {
			ckpt[0]++
		}
		lifetimes[lt]++
	}
	if len(kinds) != len(Kinds) || min(ckpt[0], ckpt[1], lifetimes[0], lifetimes[1]) < 50 {
		t.Errorf("%d kinds of %d drawn; checkpointed %v, lifetimes %v", len(kinds), len(Kinds), ckpt, lifetimes)
	}
}

// TestDecodeSteps: four bytes a step, kinds and operands taken modulo
// their counts, a kind byte from EpisodeByte up an episode, a partial step
// at the end a checkpointed program, and no more steps read once 64 are
// decoded.
func TestDecodeSteps(t *testing.T) {
	steps, ckpt := DecodeSteps([]byte{0, 17, 2, 3, byte(len(Kinds) + 1), 8, 9, 10})
	want := []Step{{Kind: 0, A: 1, B: 2, F: 0}, {Kind: 1, A: 8, B: 9, F: 0}}
	if !slices.Equal(steps, want) || ckpt {
		t.Errorf("DecodeSteps = %v, %v; want %v, false", steps, ckpt, want)
	}
	if _, ckpt := DecodeSteps([]byte{0, 1, 2, 3, 4}); !ckpt {
		t.Error("a partial step left over: not checkpointed")
	}
	if steps, _ := DecodeSteps([]byte{EpisodeByte, 0, 0, 1}); !slices.Equal(steps, Episode(0, 0, 1, float64(1%7-3)/2)) {
		t.Errorf("an episode byte: %v", steps)
	}
	long := make([]byte, 4*100)
	if steps, _ := DecodeSteps(long); len(steps) != 64 {
		t.Errorf("%d steps of 100 decoded, want 64", len(steps))
	}
}
