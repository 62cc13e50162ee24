package particles_test

import (
	"fmt"

	"github.com/mtsgd/mtsgd/particles"
)

// Three particles on a line and two Gaussian targets, N(−1, 1) and N(1, 1),
// whose scores are −(θ+1) and −(θ−1). The targets pull in opposite
// directions; MT-SGD weighs them so that the common direction decreases
// both KL divergences (Lemma 1), here equally by symmetry.
//
// By hand: the squared distances {0,0,0,¼,¼,¼,¼,1,1} have median ¼, so
// σ² = ¼/(2 ln 4) and the kernel is ¼ between neighbours, 1/256 between the
// ends. With w* = (½, ½) the combined score is −θ, and
// φ(θ_0) = (1/3)[(0.5 − 0.5/256) + (−0.125 − 1/256)/σ²] = −0.3105.
func ExampleMTSGD() {
	theta := [][]float64{{-0.5}, {0}, {0.5}}
	scores := make([][][]float64, 2)
	for k, mean := range []float64{-1, 1} {
		for _, th := range theta {
			scores[k] = append(scores[k], []float64{mean - th[0]})
		}
	}
	rule := &particles.MTSGD{Repulsion: 1}
	dir := [][]float64{{0}, {0}, {0}}
	if err := rule.Direction(dir, particles.Ensemble{Theta: theta, Scores: scores}); err != nil {
		fmt.Println(err)
		return
	}
	d := rule.Diagnostics()
	fmt.Printf("σ = %.4f, w* = [%.3f %.3f]\n", d.Sigma, d.Weights[0], d.Weights[1])
	for m, v := range dir {
		fmt.Printf("φ(θ_%d) = %+.4f\n", m, v[0])
	}
	// Output:
	// σ = 0.3003, w* = [0.500 0.500]
	// φ(θ_0) = -0.3105
	// φ(θ_1) = +0.0000
	// φ(θ_2) = +0.3105
}
