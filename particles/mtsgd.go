package particles

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/mtsgd/mtsgd/internal/asm"
	"github.com/mtsgd/mtsgd/particles/minnorm"
)

// MTSGD is Algorithm 1 of Phan et al. (2022). With the per-target Stein
// directions
//
//	φ_k(θ) = (1/M) Σ_a [k(θ_a,θ)·∇log p_k(θ_a) + ρ·∇_{θ_a}k(θ_a,θ)],
//
// it forms U_ij = ⟨φ_i, φ_j⟩ in the kernel's RKHS (Equation Uij-1 of the
// paper, all four terms), solves w* = argmin_{w ∈ simplex} wᵀUw once for the
// whole ensemble, and moves every particle along φ* = Σ_k w*_k φ_k.
//
// For the RBF kernel, with s_ia = ∇log p_i(θ_a) and Δ_ab = θ_a − θ_b,
//
//	U_ij = (1/M²) Σ_a Σ_b k_ab [⟨s_ia, s_jb⟩ + (ρ/σ²)⟨s_ia − s_jb, Δ_ab⟩
//	                            + ρ²(d/σ² − ‖Δ_ab‖²/σ⁴)].
//
// The last term has the + sign of the trace of ∂²k/∂θ∂θ' (the paper prints
// −d/σ² in its RBF line; see docs/mtsgd-choices.md). The
// repulsion weight ρ enters U exactly as it enters φ_k, so U stays the Gram
// matrix of the directions actually applied and Lemma 1 holds for any ρ.
//
// That last term is the same for every (i, j): it adds c·11ᵀ to U and so
// never moves w*, but with many parameters it can exceed the score terms by
// orders of magnitude (ρ²d/σ² against gradient inner products). The QP
// solver removes such a constant before solving (see package minnorm), so w*
// is as exact as U's float64 entries allow; Diagnostics still reports the
// full U. An uncertified QP is an error, a *minnorm.NotConvergedError
// wrapped with context, and leaves dst unwritten.
//
// When the ensemble carries a kernel evaluated elsewhere (Ensemble.Kernel,
// for a kernel over the networks' outputs), that kernel replaces the RBF
// over the positions; only the first term of U is defined for it.
//
// Beyond the scores it keeps no vector of length d: U and
// φ* = Σ_k w*_k φ_k are computed a block of coordinates at a time, on
// GOMAXPROCS goroutines, so that each score is read from memory once for
// U and once for φ*. For ResNet-18 particles (K·M·d float64 is 4.5 GB at
// K = 10, M = 5) this makes the difference between memory-bound passes
// over the scores for every pair of particles and one pass. On long
// vectors with few rows (networks; see useProducts) both are matrix
// products within a block, of its K·M score rows and M position rows
// (our AVX-512 kernels, or the BLAS): U from their Gram matrix,
// O((K+1)²·M²·d), and, with the kernel
// over the positions, φ* = B·S + A·Θ for small matrices B and A (see
// stein); otherwise loops smooth the scores, O(K·M²·d + K²·M·d). Either
// way one K×K QP follows.
type MTSGD struct {
	Kernel    RBF
	Repulsion float64
	QP        minnorm.Solver
	// FirstTermOnly keeps only the first term of U,
	// U_ij = (1/M²) Σ_a Σ_b k_ab ⟨s_ia, s_jb⟩, as the authors' code does:
	// the Gram matrix of the driving parts (1/M) Σ_a k(θ_a,·) s_ia of the
	// φ_i, without their repulsive parts. The direction is still
	// φ* = Σ_k w*_k φ_k, repulsion included; Lemma 1 then holds for the
	// driving parts rather than for the φ_k.
	FirstTermOnly bool

	km      kernelMatrix
	partial []float64 // per block of coordinates: the a_ij, then the r_i
	stein   []float64 // B and A of the direction (see stein)
	mix     []float64 // M × (K+1)·M: B and A side by side
	blocks  []blockBuffers
	u, w, r []float64
	diag    Diagnostics
}

// Diagnostics describes the last step of a rule that solves a QP over the
// whole ensemble. Its slices are overwritten by the next step.
type Diagnostics struct {
	Sigma   float64        // kernel bandwidth σ
	U       []float64      // K×K, row-major
	Weights []float64      // w*
	QP      minnorm.Result // the QP's value, gap and iterations
}

// Diagnostics returns what the last call to Direction computed, including
// an uncertified QP's result when Direction returned its error.
func (r *MTSGD) Diagnostics() Diagnostics { return r.diag }

// Direction implements Rule.
func (r *MTSGD) Direction(dst [][]float64, e Ensemble) error {
	m, k, d, err := e.shape(dst)
	if err != nil {
		return err
	}
	products := useProducts(k, m, d)
	if !products { // with products the scores are checked as U is formed
		if err := e.finiteScores(); err != nil {
			return err
		}
	}
	km := &r.km
	sigma := 0.0
	if e.Kernel != nil {
		if !r.FirstTermOnly {
			return fmt.Errorf("mtsgd: the four-term U needs the kernel over the positions; with a kernel of the networks' outputs use the first term only")
		}
		km, sigma = e.Kernel.matrix(), e.Kernel.Sigma
	} else {
		r.Kernel.evaluate(km, e.Theta) // the repulsion a block at a time
		sigma = math.Sqrt(km.sigma2)
	}
	// a[i][j] = Σ_ab k_ab ⟨s_ia, s_jb⟩ and, for the middle terms,
	// r_i = Σ_a ⟨s_ia, rep_a⟩ = Σ_ab k_ab ⟨s_ia, Δ_ab⟩, which by the symmetry
	// of k is also −Σ_ab k_ab ⟨s_ib, Δ_ab⟩. With FirstTermOnly the r_i
	// stay zero.
	r.alloc(k)
	var a []float64
	if products {
		var finite bool
		if a, finite = r.gramProducts(e, km, k, m, d); !finite {
			if err := e.finiteScores(); err != nil {
				return err
			}
			return fmt.Errorf("particles: a score is not finite once scaled by %v", e.Factor)
		}
	} else {
		a = r.innerProducts(e, km, k, m, d)
	}
	if err := r.solve(km, a, sigma, m, d); err != nil {
		return err
	}
	s2, rho := km.sigma2, r.Repulsion

	// φ* = Σ_k w*_k φ_k: smooth the combined scores (the kernel sum is
	// linear), one block of coordinates at a time.
	if km.rep == nil && products {
		r.mixDirection(dst, e, km, k, m, d)
		return nil
	}
	c := rho / s2
	scores := e.scores()
	parallelBlocks(d, &r.blocks, func(lo, hi int, buf *blockBuffers) {
		rows := buf.get(m+1, hi-lo)
		comb := rows[:m]
		cols := buf.columns(scores, lo, hi-lo)
		for a := range m {
			ca := comb[a]
			clear(ca)
			for i := range k {
				scores.addTo(ca, r.w[i], i, a, lo, column(cols, i))
			}
		}
		for b := range m {
			out := dst[b][lo:hi]
			clear(out)
			for a := range m {
				axpy(out, km.k[a][b], comb[a])
			}
			rep := repulsion(km, e.Theta, b, lo, rows[m])
			for x := range out {
				out[x] = (out[x] + c*rep[x]) / float64(m)
			}
		}
	})
	return nil
}

// mixDirection writes φ* = B·S + A·Θ into dst, with B and A the Stein
// direction's mix of the scores and positions for w* (see stein): one
// matrix product per block of coordinates, of the block's K·M score rows
// and M position rows packed together.
func (r *MTSGD) mixDirection(dst [][]float64, e Ensemble, km *kernelMatrix, k, m, d int) {
	b, a := stein(km, r.w, r.Repulsion, m, &r.stein)
	n := k*m + m
	mix := grow1(&r.mix, m*n) // row y: B's row y, then A's
	for y := range m {
		copy(mix[y*n:], b[y*k*m:(y+1)*k*m])
		copy(mix[y*n+k*m:], a[y*m:(y+1)*m])
	}
	parallelBlocks(d, &r.blocks, func(lo, hi int, buf *blockBuffers) {
		w := hi - lo
		x, _ := packBlock(buf, e, lo, hi, true, false)
		out := grow1(&buf.out, m*w)
		blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, m, w, n, 1, mix, n, x, w, 0, out, w)
		for y := range m {
			copy(dst[y][lo:hi], out[y*w:(y+1)*w])
		}
	})
}

// packBlock copies the block [lo, hi) of every score s_ia into row i·M+a
// of buf's rows and, with theta, of every position θ_a into row K·M+a, and
// returns them as one row-major matrix of hi−lo columns. With check,
// finite reports whether the score rows are all finite (without, it is
// true).
func packBlock(buf *blockBuffers, e Ensemble, lo, hi int, theta, check bool) (x []float64, finite bool) {
	scores := e.scores()
	k, m := scores.targets(), len(e.Theta)
	n := k * m
	if theta {
		n += m
	}
	rows := buf.get(n, hi-lo)
	cols := buf.columns(scores, lo, hi-lo)
	finite = true
	for i := range k {
		for a := range m {
			if check {
				finite = scores.copyFinite(rows[i*m+a], i, a, lo, column(cols, i)) && finite
			} else {
				scores.copyTo(rows[i*m+a], i, a, lo, column(cols, i))
			}
		}
	}
	if theta {
		for a := range m {
			copy(rows[k*m+a], e.Theta[a][lo:hi])
		}
	}
	return buf.buf[:n*(hi-lo)], finite
}

// grow1 returns n elements of *buf, growing it if needed.
func grow1(buf *[]float64, n int) []float64 {
	if len(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// alloc sizes U, w* and the r_i for k tasks.
func (r *MTSGD) alloc(k int) {
	if len(r.u) != k*k {
		r.u, r.w, r.r = make([]float64, k*k), make([]float64, k), make([]float64, k)
	}
	clear(r.r)
}

// solve forms U from a_ij (upper triangle) and the r_i, adding the trace
// term unless FirstTermOnly, and solves the QP into r.w.
func (r *MTSGD) solve(km *kernelMatrix, a []float64, sigma float64, m, d int) error {
	k, s2 := len(r.w), km.sigma2
	trace := 0.0
	if !r.FirstTermOnly {
		// The trace term is the same for every (i, j).
		for a := range m {
			for b := range m {
				trace += km.k[a][b] * (float64(d)/s2 - km.d2[a][b]/(s2*s2))
			}
		}
	}
	rho := r.Repulsion
	inv := 1 / float64(m*m)
	for i := range k {
		for j := i; j < k; j++ {
			v := inv * (a[i*k+j] + rho/s2*(r.r[i]+r.r[j]) + rho*rho*trace)
			r.u[i*k+j], r.u[j*k+i] = v, v
		}
	}
	res, err := r.QP.Solve(r.w, r.u)
	r.diag = Diagnostics{Sigma: sigma, U: r.u, Weights: r.w, QP: res}
	if err != nil {
		return fmt.Errorf("mtsgd: %w", err)
	}
	return nil
}

// useProducts reports whether MT-SGD forms U and φ* by matrix products
// of each block's packed rows (gramProducts, mixDirection) rather than by
// smoothing the scores with loops (innerProducts and the loops of
// Direction). The products cost about ((K+1)·M)² per coordinate against
// K·M² for the loops but run at the BLAS's speed: they pay for long
// vectors and few rows (networks), not for the toy problems' d = 2 or
// hundreds of particles (`go test ./particles -bench Step`).
func useProducts(k, m, d int) bool {
	return d >= blockSize && (k+1)*m <= 128
}

// innerProducts returns a_ij = Σ_ab k_ab ⟨s_ia, s_jb⟩ (K×K, upper triangle
// set) and, unless FirstTermOnly, sets r.r. The sums run over blocks of
// coordinates so that every score is read from memory once, and the
// blocks' partial sums are added in block order, so the result does not
// depend on how many goroutines ran them.
func (r *MTSGD) innerProducts(e Ensemble, km *kernelMatrix, k, m, d int) []float64 {
	scores := e.scores()
	partial := r.partials(k, d)
	parallelBlocks(d, &r.blocks, func(lo, hi int, buf *blockBuffers) {
		p := partial[lo/blockSize*(k*k+k+1):][:k*k+k]
		rows := buf.get(2*m, hi-lo)
		smoothed, reps := rows[:m], rows[m:]
		cols := buf.columns(scores, lo, hi-lo)
		if !r.FirstTermOnly {
			for a := range m {
				reps[a] = repulsion(km, e.Theta, a, lo, reps[a])
			}
		}
		for i := range k {
			for b := range m {
				sb := smoothed[b]
				clear(sb)
				for a := range m {
					scores.addTo(sb, km.k[a][b], i, a, lo, column(cols, i))
				}
			}
			for j := i; j < k; j++ {
				for b := range m {
					p[i*k+j] += scores.dot(smoothed[b], j, b, lo, column(cols, j))
				}
			}
			if !r.FirstTermOnly {
				for a := range m {
					p[k*k+i] += scores.dot(reps[a], i, a, lo, column(cols, i))
				}
			}
		}
	})
	a, _ := r.sumPartials(k, d)
	return a
}

// gramProducts is innerProducts by matrix products: each block's Gram
// matrix of the score rows (and position rows), its score rows checked
// (finite is false if a score holds a NaN or an Inf). With AVX-512 our
// kernels take it (gram.go): float32 scores read without normalisation
// where they lie, others from the rows packBlock copies; elsewhere the
// BLAS's Dsyrk on those rows (twice as fast as innerProducts at K = 10,
// M = 5 on long vectors).
func (r *MTSGD) gramProducts(e Ensemble, km *kernelMatrix, k, m, d int) (a []float64, finite bool) {
	partial := r.partials(k, d)
	parallelBlocks(d, &r.blocks, func(lo, hi int, buf *blockBuffers) {
		p := partial[lo/blockSize*(k*k+k+1):][:k*k+k+1]
		// The block's Gram matrix of the score rows (and position rows):
		// g[x·n+y] = ⟨row x, row y⟩ for x ≤ y.
		n := k * m
		if !r.FirstTermOnly {
			n += m
		}
		g := grow1(&buf.gram, n*n)
		var finite bool
		switch scores := e.scores(); {
		case asm.ServesGram() && scores.f32 != nil && !scores.normalize:
			// Read where they lie, not copied.
			var theta [][]float64
			if !r.FirstTermOnly {
				theta = e.Theta
			}
			finite = asm.GramScores32(scores.f32, theta, lo, hi, scores.factor, g, n)
		case asm.ServesGram():
			var x []float64
			x, finite = packBlock(buf, e, lo, hi, !r.FirstTermOnly, true)
			asm.Gram(x[:(n+3)/4*4*(hi-lo)], n, hi-lo, g)
		default:
			var x []float64
			x, finite = packBlock(buf, e, lo, hi, !r.FirstTermOnly, true)
			blas64.Implementation().Dsyrk(blas.Upper, blas.NoTrans, n, hi-lo, 1, x, hi-lo, 0, g, n)
		}
		if !finite {
			p[k*k+k] = 1
			return
		}
		at := func(x, y int) float64 { return g[min(x, y)*n+max(x, y)] }
		for i := range k {
			for j := i; j < k; j++ {
				s := 0.0
				for a := range m {
					for b := range m {
						s += km.k[a][b] * at(i*m+a, j*m+b)
					}
				}
				p[i*k+j] = s
			}
			if !r.FirstTermOnly {
				s := 0.0
				for a := range m {
					for b := range m {
						s += km.k[a][b] * (at(i*m+a, k*m+a) - at(i*m+a, k*m+b))
					}
				}
				p[k*k+i] = s
			}
		}
	})
	return r.sumPartials(k, d)
}

// partials returns r.partial cleared for d coordinates: per block the
// a_ij (K×K), the r_i (K) and a flag set when the block's scores are not
// finite.
func (r *MTSGD) partials(k, d int) []float64 {
	width := k*k + k + 1
	blocks := (d + blockSize - 1) / blockSize
	if cap(r.partial) < blocks*width {
		r.partial = make([]float64, blocks*width)
	}
	partial := r.partial[:blocks*width]
	clear(partial)
	return partial
}

// sumPartials adds the blocks' partial sums in block order, sets r.r and
// returns the a_ij, and whether no block flagged its scores.
func (r *MTSGD) sumPartials(k, d int) (a []float64, finite bool) {
	width := k*k + k + 1
	blocks := (d + blockSize - 1) / blockSize
	sum := r.partial[:width]
	for b := 1; b < blocks; b++ {
		for x, v := range r.partial[b*width : (b+1)*width] {
			sum[x] += v
		}
	}
	copy(r.r, sum[k*k:k*k+k])
	return sum[:k*k], sum[k*k+k] == 0
}

// repulsion returns the block of rep[a] (see kernelMatrix) from lo, of
// buf's length: km's own when it has them (a kernel evaluated elsewhere),
// else computed into buf.
func repulsion(km *kernelMatrix, theta [][]float64, a, lo int, buf []float64) []float64 {
	if km.rep != nil {
		return km.rep[a][lo : lo+len(buf)]
	}
	km.repBlock(buf, theta, a, lo)
	return buf
}

// stein returns B and A of the Stein direction
// φ(θ_b) = (1/M) Σ_a [k_ab·Σ_i w_i s_ia + ρ·∇_{θ_a}k(θ_a,θ_b)], in buf
// (grown if needed).
func stein(km *kernelMatrix, weights []float64, rho float64, m int, buf *[]float64) (b, a []float64) {
	k := len(weights)
	all := grow1(buf, m*k*m+m*m)
	clear(all)
	b, a = all[:m*k*m], all[m*k*m:]
	c := rho / (km.sigma2 * float64(m))
	for y := range m {
		for x := range m {
			for i, wi := range weights {
				b[y*k*m+i*m+x] = wi * km.k[x][y] / float64(m)
			}
			a[y*m+x] -= c * km.k[x][y]
			a[y*m+y] += c * km.k[x][y]
		}
	}
	return b, a
}
