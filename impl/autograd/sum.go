package autograd

import "math/bits"

// sum adds x up in the order PyTorch's CPU kernel does for a contiguous
// float64 tensor (aten/src/ATen/native/cpu/SumKernel.cpp,
// vectorized_inner_sum, with AVX2's vectors of four doubles): the
// elements in whole vectors are summed lane by lane by row_sum (four
// accumulators, cascaded every 16 steps), the rest one by one, and
// then the four lanes are added to that. Sums of the same numbers in
// another order can differ in the last bits; this one rounds as
// PyTorch's does (its sequential sum is exact for at most four
// elements only).
func sum(x []float64) float64 {
	const lanes = 4
	nvec := len(x) / lanes
	vec := func(i int) [lanes]float64 { return [lanes]float64(x[i*lanes : (i+1)*lanes]) }
	acc := rowSum(vec, nvec)
	total := 0.0
	for _, v := range x[nvec*lanes:] {
		total += v
	}
	for _, v := range acc {
		total += v
	}
	return total
}

// rowSum is SumKernel.cpp's row_sum over n vectors: multi_row_sum of
// the rows of four vectors, the vectors left over added to the first
// partial sum, and the partial sums added in order.
func rowSum(vec func(int) [4]float64, n int) [4]float64 {
	const ilp = 4
	rows := n / ilp
	p := multiRowSum(func(i, k int) [4]float64 { return vec(i*ilp + k) }, rows)
	for i := rows * ilp; i < n; i++ {
		p[0] = add4(p[0], vec(i))
	}
	for k := 1; k < ilp; k++ {
		p[0] = add4(p[0], p[k])
	}
	return p[0]
}

// multiRowSum is SumKernel.cpp's multi_row_sum: four columns summed
// over size rows, in a cascade of four levels whose first level is
// folded into the next every level_step rows.
func multiRowSum(at func(i, k int) [4]float64, size int) [4][4]float64 {
	const levels = 4
	power := max(4, ceilLog2(size)/levels)
	step := 1 << power
	mask := step - 1
	var acc [levels][4][4]float64
	i := 0
	for i+step <= size {
		for j := 0; j < step; j, i = j+1, i+1 {
			for k := range 4 {
				acc[0][k] = add4(acc[0][k], at(i, k))
			}
		}
		for j := 1; j < levels; j++ {
			for k := range 4 {
				acc[j][k] = add4(acc[j][k], acc[j-1][k])
				acc[j-1][k] = [4]float64{}
			}
			if i&(mask<<(j*power)) != 0 {
				break
			}
		}
	}
	for ; i < size; i++ {
		for k := range 4 {
			acc[0][k] = add4(acc[0][k], at(i, k))
		}
	}
	for j := 1; j < levels; j++ {
		for k := range 4 {
			acc[0][k] = add4(acc[0][k], acc[j][k])
		}
	}
	return acc[0]
}

func add4(a, b [4]float64) [4]float64 {
	return [4]float64{a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]}
}

// ceilLog2 is ATen's CeilLog2: 1 up to 2, else the bits of x-1.
func ceilLog2(x int) int {
	if x <= 2 {
		return 1
	}
	return bits.Len64(uint64(x - 1))
}
