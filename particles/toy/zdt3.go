package toy

import (
	"math"
	"math/rand/v2"
)

// ZDT3Dim is the number of variables of ZDT3.
const ZDT3Dim = 30

// ZDT3Margin keeps particles inside [ZDT3Margin, 1 − ZDT3Margin]^30.
//
// The box is kept by Euclidean projection (clipping) after every optimiser
// step, as in Liu et al.'s MOO-SVGD code for ZDT problems. The lower margin
// matters: ∂f2/∂θ1 contains −½·sqrt(g/f1), infinite at f1 = θ1 = 0, and at
// θ1 = 1e-6 it is about −500. The score is never evaluated outside the box.
const ZDT3Margin = 1e-6

// ZDT3Objectives returns f1 = θ1, f2 = g·h(f1, g) and
// g = 1 + 9/29·Σ_{i≥2} θ_i, with h = 1 − sqrt(f1/g) − (f1/g)·sin(10π·f1).
func ZDT3Objectives(theta []float64) (f1, f2, g float64) {
	f1 = theta[0]
	sum := 0.0
	for _, v := range theta[1:] {
		sum += v
	}
	g = 1 + 9*sum/float64(len(theta)-1)
	r := f1 / g
	f2 = g * (1 - math.Sqrt(r) - r*math.Sin(10*math.Pi*f1))
	return f1, f2, g
}

// ZDT3ParetoSegments are the f1 intervals of ZDT3's Pareto-optimal set
// (where also θ_i = 0 for i ≥ 2), from Zitzler, Deb & Thiele (2000) as tabled
// in the paper's appendix, to more digits.
var ZDT3ParetoSegments = [5][2]float64{
	{0, 0.0830015349},
	{0.1822287280, 0.2577623634},
	{0.4093136748, 0.4538821041},
	{0.6183967944, 0.6525117038},
	{0.8233317983, 0.8518328654},
}

// ZDT3Front returns f2 on the Pareto front at f1 (g = 1).
func ZDT3Front(f1 float64) float64 {
	return 1 - math.Sqrt(f1) - f1*math.Sin(10*math.Pi*f1)
}

// ZDT3 is the paper's second toy problem, with targets p_k ∝ exp(−f_k) on
// [0,1]^30 (see ZDT3Margin for how the box is kept). Particles start uniform
// on the box.
func ZDT3() Problem {
	project := func(theta []float64) {
		for i, v := range theta {
			theta[i] = math.Min(1-ZDT3Margin, math.Max(ZDT3Margin, v))
		}
	}
	return Problem{
		Name:    "zdt3",
		Dim:     ZDT3Dim,
		Targets: 2,
		LogDensity: func(k int, theta []float64) float64 {
			f1, f2, _ := ZDT3Objectives(theta)
			if k == 0 {
				return -f1
			}
			return -f2
		},
		Score: func(k int, dst, theta []float64) {
			for i := range dst {
				dst[i] = 0
			}
			if k == 0 { // −∇f1 = −e1
				dst[0] = -1
				return
			}
			// f2 = g − sqrt(f1·g) − f1·sin(10π f1), so
			// ∂f2/∂θ1 = −½ sqrt(g/f1) − sin(10π f1) − 10π f1 cos(10π f1),
			// ∂f2/∂θi = 9/29·(1 − ½ sqrt(f1/g)) for i ≥ 2.
			f1, _, g := ZDT3Objectives(theta)
			dst[0] = 0.5*math.Sqrt(g/f1) + math.Sin(10*math.Pi*f1) + 10*math.Pi*f1*math.Cos(10*math.Pi*f1)
			dg := -9 / float64(len(theta)-1) * (1 - 0.5*math.Sqrt(f1/g))
			for i := 1; i < len(dst); i++ {
				dst[i] = dg
			}
		},
		Init: func(rng *rand.Rand, theta []float64) {
			for i := range theta {
				theta[i] = rng.Float64()
			}
		},
		Project: project,
		Summary: func(theta [][]float64) map[string]any {
			s := SummariseZDT3(theta)
			return map[string]any{
				"mean_g": s.MeanG, "f1_min": s.MinF1, "f1_max": s.MaxF1,
				"per_pareto_segment": s.OnSegment, "off_segments": s.OffSegments,
			}
		},
		Objectives: func(theta []float64) []float64 {
			f1, f2, _ := ZDT3Objectives(theta)
			return []float64{f1, f2}
		},
		Front: &Front{Segments: ZDT3ParetoSegments[:], F2: ZDT3Front},
	}
}

// ZDT3Summary describes where particles ended on ZDT3.
type ZDT3Summary struct {
	MeanG float64 // mean of g over particles; 1 on the Pareto set
	MinF1 float64
	MaxF1 float64
	// OnSegment[s] counts particles whose f1 lies in ZDT3ParetoSegments[s];
	// OffSegments counts the rest.
	OnSegment   [5]int
	OffSegments int
}

// SummariseZDT3 computes a ZDT3Summary of the particles.
func SummariseZDT3(theta [][]float64) ZDT3Summary {
	s := ZDT3Summary{MinF1: math.Inf(1), MaxF1: math.Inf(-1)}
	for _, th := range theta {
		f1, _, g := ZDT3Objectives(th)
		s.MeanG += g / float64(len(theta))
		s.MinF1 = math.Min(s.MinF1, f1)
		s.MaxF1 = math.Max(s.MaxF1, f1)
		on := false
		for i, seg := range ZDT3ParetoSegments {
			if f1 >= seg[0] && f1 <= seg[1] {
				s.OnSegment[i]++
				on = true
			}
		}
		if !on {
			s.OffSegments++
		}
	}
	return s
}
