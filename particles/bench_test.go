package particles_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	_ "github.com/mtsgd/mtsgd/internal/openblas" // the BLAS of the README's build, with -tags openblas
	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/toy"
)

// mog3Ensemble draws M particles from mog3's initial distribution and fills
// in the three targets' scores.
func mog3Ensemble(m int) particles.Ensemble {
	p := toy.MOG3()
	rng := rand.New(rand.NewPCG(1, 1))
	e := particles.Ensemble{Theta: make([][]float64, m), Scores: make([][][]float64, p.Targets)}
	for i := range e.Theta {
		e.Theta[i] = make([]float64, p.Dim)
		p.Init(rng, e.Theta[i])
	}
	for k := range e.Scores {
		e.Scores[k] = make([][]float64, m)
		for i := range e.Scores[k] {
			e.Scores[k][i] = make([]float64, p.Dim)
			p.Score(k, e.Scores[k][i], e.Theta[i])
		}
	}
	return e
}

// BenchmarkStep times one update step (the rule's Direction: kernel, QPs and
// directions) of MT-SGD and MOO-SVGD on mog3 (d = 2, K = 3). MT-SGD solves
// one K×K QP per step, MOO-SVGD one per particle.
func BenchmarkStep(b *testing.B) {
	for _, method := range []string{"mtsgd", "moo-svgd"} {
		for _, m := range []int{5, 50, 200} {
			b.Run(fmt.Sprintf("%s/M=%d", method, m), func(b *testing.B) {
				var rule particles.Rule = &particles.MTSGD{Repulsion: 1}
				if method == "moo-svgd" {
					rule = &particles.MOOSVGD{Repulsion: 1}
				}
				e := mog3Ensemble(m)
				dst := make([][]float64, m)
				for i := range dst {
					dst[i] = make([]float64, 2)
				}
				b.ResetTimer()
				for range b.N {
					if err := rule.Direction(dst, e); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
			})
		}
	}
}

// BenchmarkDirectionScores32 times MT-SGD's direction over long float32
// score vectors, a network's (d = 2²¹, K = 10 targets, M = 5 particles;
// ResNet-18's trunk is 11.2 M coordinates): a pass over every score for
// U, another for the directions, each converting the scores to float64.
//
//	go test ./particles -run '^$' -bench DirectionScores32 -benchtime 5x
func BenchmarkDirectionScores32(b *testing.B) {
	const d, k, m = 1 << 21, 10, 5
	rng := rand.New(rand.NewPCG(3, 4))
	e := particles.Ensemble{Theta: make([][]float64, m), Scores32: make([][][]float32, k)}
	dst := make([][]float64, m)
	for i := range e.Theta {
		e.Theta[i], dst[i] = make([]float64, d), make([]float64, d)
		for j := range e.Theta[i] {
			e.Theta[i][j] = rng.NormFloat64()
		}
	}
	for t := range e.Scores32 {
		e.Scores32[t] = make([][]float32, m)
		for i := range e.Scores32[t] {
			e.Scores32[t][i] = make([]float32, d)
			for j := range e.Scores32[t][i] {
				e.Scores32[t][i][j] = float32(rng.NormFloat64())
			}
		}
	}
	rule := &particles.MTSGD{Repulsion: 1}
	b.ResetTimer()
	for range b.N {
		if err := rule.Direction(dst, e); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
}
