package autograd

import "testing"

// TestSumCascade: long enough for row_sum's cascade (16 rows of four
// vectors and more), sum rounds as PyTorch 1.13 does; a sequential sum
// gives what the comments say.
//
//	torch.tensor([(i % 17) / 10 + 0.01 for i in range(n)]).sum().item()
func TestSumCascade(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{
		{300, 239.70000000000002}, // 239.70000000000027
		{700, 564.8999999999999},  // 564.9000000000005
		{1500, 1212.4},            // 1212.3999999999926
	} {
		x := make([]float64, c.n)
		for i := range x {
			x[i] = float64(i%17)/10 + 0.01
		}
		if got := sum(x); got != c.want {
			t.Errorf("n = %d: sum %v, want PyTorch's %v", c.n, got, c.want)
		}
	}
}
