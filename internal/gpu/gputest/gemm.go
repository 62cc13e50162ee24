package gputest

import "fmt"

// checkGemm checks the four transpose cases, with leading dimensions
// wider than the matrices, against the triple loop.
func checkGemm(k *kit) {
	const m, n, kk, pad = 5, 4, 3, 2
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			ar, ac := m, kk
			if tA {
				ar, ac = kk, m
			}
			br, bc := kk, n
			if tB {
				br, bc = n, kk
			}
			lda, ldb, ldc := ac+pad, bc+pad, n+pad
			a, b, c := k.randoms(ar*lda, -1, 1), k.randoms(br*ldb, -1, 1), k.randoms(m*ldc, -1, 1)
			pa, pb, pc := k.upload(a), k.upload(b), k.upload(c)
			if err := k.dev.Gemm(k.dt, tA, tB, m, n, kk, 2, pa, lda, pb, ldb, 0.5, pc, ldc); err != nil {
				k.t.Fatal(err)
			}
			want := append([]float64(nil), c...)
			for i := range m {
				for j := range n {
					var s float64
					for l := range kk {
						ai, bi := i*lda+l, l*ldb+j
						if tA {
							ai = l*lda + i
						}
						if tB {
							bi = j*ldb + l
						}
						av, bv := a[ai], b[bi]
						s += av * bv
					}
					want[i*ldc+j] = 2*s + 0.5*c[i*ldc+j]
				}
			}
			k.near(fmt.Sprintf("gemm tA=%v tB=%v", tA, tB), k.download(pc, m*ldc), want)
		}
	}
}
