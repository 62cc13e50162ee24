package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDegenerateSetsEnd runs every aggregator on 600 random sets of
// K = 3..5 gradients in the plane (so always dependent), in half of them
// one pair made nearly opposite (gⱼ = −c·gᵢ plus a perturbation of 10⁻⁶
// to 10⁻², sets on which a cone projection's certificate is hard to meet
// and an active-set loop can cycle), norms spread over 10², and on as many sets of two gradients
// in 10-D, nearly parallel or nearly opposite (perturbations of 10⁻⁸ to
// 10⁻¹). Each call must end (all of them within 60 s), and must either
// give a finite direction or an error wrapping ErrUndefined (IMTL-G's
// undefined directions): no method may fail its own certificate or
// solver on these. CAGrad is held to the two-task sets alone: with three
// or more its barrier can stall on the planar ones (its doc says how
// often).
func TestDegenerateSetsEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(151, 152))
	var sets [][][]float64
	for n := range 600 {
		k := 3 + n%3
		g := randomGradients(rng, k, 2)
		spreadNorms(rng, g, -1, 1)
		if n%2 == 0 {
			c, eps := 0.5+rng.Float64(), math.Pow(10, -6+4*rng.Float64())
			g[1][0] = -c*g[0][0] + eps*rng.NormFloat64()
			g[1][1] = -c*g[0][1] + eps*rng.NormFloat64()
		}
		sets = append(sets, g)
	}
	var pairs [][][]float64
	for n := range 600 {
		g := randomGradients(rng, 2, 10)
		c, eps := 0.2+2*rng.Float64(), math.Pow(10, -8+7*rng.Float64())
		if n%2 == 0 {
			c = -c
		}
		for x := range g[1] {
			g[1][x] = c*g[0][x] + eps*rng.NormFloat64()
		}
		pairs = append(pairs, g)
	}
	done := make(chan []string, 1)
	go func() {
		var failed []string
		for method, a := range aggregators() {
			bad, first := 0, ""
			all := append(append([][][]float64(nil), pairs...), sets...)
			if method == "cagrad" || method == "cagrad c=2" {
				all = pairs
			}
			for n, g := range all {
				d, err := aggregateOrErr(a, g)
				switch {
				case err != nil && !errors.Is(err, ErrUndefined):
					if bad == 0 {
						first = err.Error() + " on " + formatSet(g) + " (set " + formatFloat(float64(n)) + ")"
					}
					bad++
				case err == nil && !(maxAbs(d) < math.Inf(1)):
					if bad == 0 {
						first = "a direction not finite on " + formatSet(g)
					}
					bad++
				}
			}
			if bad > 0 {
				failed = append(failed, method+": "+formatFloat(float64(bad))+" of "+formatFloat(float64(len(all)))+" sets, first "+first)
			}
		}
		done <- failed
	}()
	select {
	case failed := <-done:
		for _, f := range failed {
			t.Error(f)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("an aggregator did not return within 60 s")
	}
}

func formatSet(g [][]float64) string {
	s := "["
	for i, r := range g {
		if i > 0 {
			s += " "
		}
		s += "(" + formatFloat(r[0]) + ", " + formatFloat(r[1]) + ")"
	}
	return s + "]"
}
