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
// to 10⁻², sets on which a cone projection's certificate is hard to
// meet and an active-set loop can cycle), norms spread over 10², and on
// as many sets of two gradients in 10-D, nearly parallel or nearly
// opposite (perturbations of 10⁻⁸ to 10⁻¹). Each call must end (all of
// them within 60 s) with a finite direction or an error wrapping
// ErrUndefined (IMTL-G's undefined directions); other errors, a method's
// solver failing its certificate, are allowed only to CAGrad's barrier
// on the planar sets with three or more tasks (caGradStalls; measured
// 2026-12-07, -v: 1 of the 600 planar sets at c = 0.4, 20 at c = 2).
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
				t.Logf("%s: %d of %d sets not certified", method, bad, len(all))
			}
			if bad > caGradStalls[method] {
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

// caGradStalls are the sets of TestDegenerateSetsEnd (planar, three or
// more tasks) on which CAGrad's barrier may stall short of its
// certificate, its doc's figures with a margin.
var caGradStalls = map[string]int{"cagrad": 2, "cagrad c=2": 25}

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

// TestNearlyDependentSets runs every aggregator on 1,500 random sets of
// K = 3..8 gradients in 5 to 50 dimensions whose last gradient is a
// combination of the others plus noise of 10⁻¹⁰ to 10⁻², a third of
// them with a nearly opposite pair as well: for the cone projections
// (UPGrad, DualProj) a thin cone, whose exact projection needs
// multipliers the active set cannot resolve. Their directions must
// conflict with no task beyond d·gⱼ ≥ −1e-8‖gⱼ‖·max‖gᵢ‖ (the
// certificate's cosine bound). Each method may fail its certificate on
// at most nearlyDependentFailures of the sets (measured 2026-12-07, -v:
// UPGrad 1, CAGrad 4 at c = 0.4 and 63 at c = 2, the others none);
// IMTL-G's undefined directions (ErrUndefined) are not failures.
func TestNearlyDependentSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(161, 162))
	failed := map[string]int{}
	for n := range 1500 {
		k := 3 + n%6
		g := randomGradients(rng, k, 5+rng.IntN(46))
		eps := math.Pow(10, -10+8*rng.Float64())
		for x := range g[k-1] {
			v := 0.0
			for i := range k - 1 {
				v += (rng.Float64()*2 - 1) * g[i][x]
			}
			g[k-1][x] = v + eps*rng.NormFloat64()
		}
		if n%3 == 0 {
			c := 0.5 + rng.Float64()
			for x := range g[1] {
				g[1][x] = -c*g[0][x] + eps*rng.NormFloat64()
			}
		}
		scale := 0.0
		for _, r := range g {
			scale = math.Max(scale, math.Sqrt(dotProduct(r, r)))
		}
		for name, a := range aggregators() {
			d, err := aggregateOrErr(a, g)
			if errors.Is(err, ErrUndefined) {
				continue
			}
			if err != nil {
				failed[name]++
				continue
			}
			if name != "upgrad" && name != "dualproj" {
				continue
			}
			for j, r := range g {
				if p := dotProduct(d, r); p < -1e-8*math.Sqrt(dotProduct(r, r))*scale {
					t.Errorf("%s, set %d: d·g%d = %.3g", name, n, j, p)
				}
			}
		}
	}
	for name, n := range failed {
		if n > nearlyDependentFailures[name] {
			t.Errorf("%s: %d of 1500 sets not certified", name, n)
		}
		t.Logf("%s: %d of 1500 sets not certified", name, n)
	}
}

// nearlyDependentFailures are the sets of TestNearlyDependentSets a
// method may fail to certify, its measured count with a margin.
var nearlyDependentFailures = map[string]int{"upgrad": 2, "cagrad": 6, "cagrad c=2": 70}
