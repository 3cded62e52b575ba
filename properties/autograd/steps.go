package autograd

import (
	"fmt"
	"math/rand/v2"
)

// Step is one step of an in-process program: a step over a pool of
// tensors, of kind Kinds[Kind], naming its operands by index into the
// pool: an operand k below newestFrom is index k (modulo the pool's
// length), one from newestFrom up the (k-newestFrom)-th newest tensor, so
// that a step can reach what the steps just before it made (see Episode).
// Any subsequence of steps is a program, so shrinking drops steps freely.
type Step struct {
	Kind int // see Kinds
	A, B int
	F    float64
}

func (s Step) String() string {
	return fmt.Sprintf("%s(%d,%d,%g)", Kinds[s.Kind].Name, s.A, s.B, s.F)
}

// Operands: below newestFrom an index into the pool, from newestFrom up
// to Operands-1 the (k-newestFrom)-th newest tensor.
const (
	newestFrom = 8
	Operands   = 16
)

// Newest is the operand naming the i-th newest tensor (0: the last made).
func Newest(i int) int { return newestFrom + i }

// PoolIndex is the index operand k names in a pool of n tensors (0 for
// an empty pool).
func PoolIndex(k, n int) int {
	switch {
	case n == 0:
		return 0
	case k < newestFrom:
		return k % n
	default:
		return n - 1 - (k-newestFrom)%n
	}
}

// GenerateSteps draws an in-process program of at least 1 and about 30
// steps at most: steps, and one draw in eight an episode (see Episode)
// instead of a step; then whether it is checkpointed, and its lifetime (0
// TensorLogic's, 1 PyTorch's: impl/autograd's Lifetime).
func GenerateSteps(r *rand.Rand) (steps []Step, checkpointed bool, lifetime int) {
	n := 1 + r.IntN(30)
	for len(steps) < n {
		if r.IntN(8) == 0 {
			steps = append(steps, DrawEpisode(r)...)
			continue
		}
		steps = append(steps, DrawStep(r))
	}
	return steps, r.IntN(2) == 1, r.IntN(2)
}

// DrawStep draws one step of any kind from r.
func DrawStep(r *rand.Rand) Step {
	return Step{Kind: r.IntN(len(Kinds)), A: r.IntN(Operands), B: r.IntN(Operands), F: float64(r.IntN(7)-3) / 2}
}

// DrawEpisode draws an episode's steps from r.
func DrawEpisode(r *rand.Rand) []Step {
	return Episode(r.IntN(64), r.IntN(64), r.IntN(64), float64(r.IntN(7)-3)/2)
}

// EpisodeByte is the least kind byte of DecodeSteps that makes an
// episode: one byte in sixteen.
const EpisodeByte = 240

// maxDecoded bounds DecodeSteps: no step is read once the program has
// as many (an episode's steps counted).
const maxDecoded = 64

// DecodeSteps decodes data as an in-process program, four bytes a step
// (the kind, two operands, a constant). A kind byte from EpisodeByte up is
// an episode (see Episode) whose parameters are the other three bytes. A
// partial step left over at the end (1 to 3 bytes) makes the program
// checkpointed, so that inputs of whole steps keep the meaning they had
// before checkpoints; operand bytes are taken modulo Operands and kind
// bytes below EpisodeByte modulo the kinds, so that bytes below 8 keep
// the meaning they had before episodes and operands that name the newest
// tensors. Any bytes decode.
func DecodeSteps(data []byte) (steps []Step, checkpointed bool) {
	checkpointed = len(data)%4 != 0
	steps = make([]Step, 0, len(data)/4)
	for ; len(data) >= 4 && len(steps) < maxDecoded; data = data[4:] {
		f := float64(int(data[3]%7)-3) / 2
		if data[0] >= EpisodeByte {
			steps = append(steps, Episode(int(data[1]), int(data[2]), int(data[3]), f)...)
			continue
		}
		steps = append(steps, Step{Kind: int(data[0]) % len(Kinds), A: int(data[1] % Operands), B: int(data[2] % Operands), F: f})
	}
	return steps, checkpointed
}
