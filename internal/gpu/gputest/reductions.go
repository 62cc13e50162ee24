package gputest

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// checkSumColumns2 checks sum_columns2_to against two sum_columns_to
// launches, one per block of partial sums, bit for bit.
func checkSumColumns2(k *kit) {
	const rows, cols = 6, 5
	part := k.uploadAs(gpu.Float64, k.randoms(2*rows*cols, -1, 1))
	a, b, wantA, wantB := k.buffer(k.dt, cols), k.buffer(k.dt, cols), k.buffer(k.dt, cols), k.buffer(k.dt, cols)
	k.launch("sum_columns2_to", 2*cols, a, b, part, rows, cols)
	k.launch("sum_columns_to", cols, wantA, part, rows, cols)
	k.launch("sum_columns_to", cols, wantB, part+gpu.Ptr(8*rows*cols), rows, cols)
	k.same("sum_columns2_to, first", k.download(a, cols), k.download(wantA, cols))
	k.same("sum_columns2_to, second", k.download(b, cols), k.download(wantB, cols))
}

// checkColumnSums checks column_sums against channel_partial (mode 2,
// one value per partial) and sum_columns_to, the two launches it
// replaces for a linear layer's bias gradient: bit for bit.
func checkColumnSums(k *kit) {
	const rows, cols = 9, 7
	g := k.randoms(rows*cols, -1, 1)
	pg, out, part, want := k.upload(g), k.buffer(k.dt, cols), k.buffer(gpu.Float64, rows*cols), k.buffer(k.dt, cols)
	k.launch("column_sums", cols, out, pg, rows, cols)
	k.launch("channel_partial", rows*cols, part, gpu.Ptr(0), pg, gpu.Ptr(0), gpu.Ptr(0), gpu.Ptr(0), 2, rows, cols, 1)
	k.launch("sum_columns_to", cols, want, part, rows, cols)
	k.same("column_sums", k.download(out, cols), k.download(want, cols))
	sums := make([]float64, cols)
	for i := range rows {
		for j := range cols {
			sums[j] += g[i*cols+j]
		}
	}
	k.near("column_sums against the sums", k.download(out, cols), sums)
}

// reduce is channel_partial then sum_columns: per channel, the sum over
// examples of their partial sums. It checks that sum_columns_to writes
// those sums, rounded to the kit's type, bit for bit.
func (k *kit) reduce(mode int, x, g, w gpu.Ptr, mean, inv gpu.Ptr, n, c, inner int) []float64 {
	part, out, typed := k.buffer(gpu.Float64, n*c), k.buffer(gpu.Float64, c), k.buffer(k.dt, c)
	k.launch("channel_partial", n*c, part, x, g, w, mean, inv, mode, n, c, inner)
	k.launchRaw("sum_columns", c, out, part, n, c)
	k.launch("sum_columns_to", c, typed, part, n, c)
	sums := k.downloadAs(gpu.Float64, out, c)
	want := make([]float64, c)
	for i, v := range sums {
		want[i] = k.round(v)
	}
	k.same(fmt.Sprintf("sum_columns_to, mode %d", mode), k.download(typed, c), want)
	return sums
}

func checkChannelPartial(k *kit) {
	const n, c, inner = 4, 3, 10
	x, g, w := k.randoms(n*c*inner, -1, 1), k.randoms(n*c*inner, -1, 1), k.randoms(n, 0, 1)
	mean, inv := []float64{0.1, -0.2, 0.3}, []float64{2, 0.5, 1.5}
	px, pg, pw := k.upload(x), k.upload(g), k.upload(w)
	pm, pi := k.uploadAs(gpu.Float64, mean), k.uploadAs(gpu.Float64, inv)
	for mode := range 4 {
		want := make([]float64, c)
		for ch := range c {
			for e := range n {
				var s float64
				for p := range inner {
					i := (e*c+ch)*inner + p
					switch mode {
					case 0:
						s += x[i]
					case 1:
						s += (x[i] - mean[ch]) * (x[i] - mean[ch])
					case 2:
						s += g[i]
					case 3:
						s += g[i] * (x[i] - mean[ch]) * inv[ch]
					}
				}
				if mode < 2 {
					s *= w[e] / inner
				}
				want[ch] += s
			}
		}
		weights := pw
		if mode >= 2 {
			weights = 0
		}
		k.near(fmt.Sprintf("mode %d", mode), k.reduce(mode, px, pg, weights, pm, pi, n, c, inner), want)
	}
}

// checkSumRows sums long rows as a bias gradient does on the device:
// channel_partial over chunks of each row, then sum_rows_to adding the
// chunks' sums in order, against each row's sum in float64.
func checkSumRows(k *kit) {
	const rows, chunks, inner = 3, 4, 5
	g := k.randoms(rows*chunks*inner, -1, 1)
	pg, part, out := k.upload(g), k.buffer(gpu.Float64, rows*chunks), k.buffer(k.dt, rows)
	k.launch("channel_partial", rows*chunks, part, gpu.Ptr(0), pg, gpu.Ptr(0), gpu.Ptr(0), gpu.Ptr(0), 2, rows, chunks, inner)
	k.launch("sum_rows_to", rows, out, part, rows, chunks)
	parts := k.downloadAs(gpu.Float64, part, rows*chunks)
	want, exact := make([]float64, rows), make([]float64, rows)
	for r := range rows {
		var s float64
		for j := range chunks {
			s += parts[r*chunks+j] // the kernel's order: chunks in turn
		}
		want[r] = k.round(s)
		for i := range chunks * inner {
			exact[r] += g[r*chunks*inner+i]
		}
	}
	got := k.download(out, rows)
	k.same("sum_rows_to", got, want)
	k.near("sum_rows_to against each row's sum", got, exact)
}
