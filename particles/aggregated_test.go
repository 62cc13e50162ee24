package particles

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/particles/aggregate"
)

// meanAggregator is the mean of the task gradients: aggregated, it must
// give linear scalarisation's direction, and with repulsion SVGD's on
// the tasks' equally weighted product.
type meanAggregator struct{}

func (meanAggregator) Aggregate(dst []float64, g [][]float64, _ aggregate.Step) error {
	for i := range dst {
		dst[i] = 0
		for k := range g {
			dst[i] += g[k][i] / float64(len(g))
		}
	}
	return nil
}

// countingAggregator weighs the tasks by how many steps it has made and
// the losses it has seen, so that its direction depends on its state.
type countingAggregator struct{ steps, lossSum float64 }

func (c *countingAggregator) Aggregate(dst []float64, g [][]float64, s aggregate.Step) error {
	c.steps++
	for _, l := range s.Losses {
		c.lossSum += l
	}
	for i := range dst {
		dst[i] = (c.steps + c.lossSum) * g[0][i]
	}
	return nil
}
func (c *countingAggregator) State() []float64 { return []float64{c.steps, c.lossSum} }
func (c *countingAggregator) SetState(s []float64) error {
	if len(s) != 2 {
		return fmt.Errorf("want 2 values, got %d", len(s))
	}
	c.steps, c.lossSum = s[0], s[1]
	return nil
}

func zeros(m, d int) [][]float64 { return grow(nil, m, d) }

// The mean aggregator reproduces Linear without repulsion and SVGD (equal
// weights) when repelled, and Repelled MGDA is MOO-SVGD: each pair sums
// the same terms, perhaps in another order (tolerance 1e-12 relative).
func TestAggregatedAndRepelledMatchTheirNamesakes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m, k, d = 4, 3, 6
	e := randomEnsemble(rng, m, k, d)
	mean := func() aggregate.Aggregator { return meanAggregator{} }
	for _, c := range []struct {
		name      string
		rule, ref Rule
	}{
		{"mean", &Aggregated{New: mean, Particles: m}, &Linear{}},
		{"repelled mean", &Repelled{Rule: &Aggregated{New: mean, Particles: m}, Repulsion: 1}, &SVGD{Repulsion: 1}},
		{"repelled mgda", &Repelled{Rule: &MGDA{}, Repulsion: 0.5}, &MOOSVGD{Repulsion: 0.5}},
	} {
		got, want := zeros(m, d), zeros(m, d)
		if err := c.rule.Direction(got, e); err != nil {
			t.Fatal(err)
		}
		if err := c.ref.Direction(want, e); err != nil {
			t.Fatal(err)
		}
		for a := range m {
			for i := range d {
				if math.Abs(got[a][i]-want[a][i]) > 1e-12*(1+math.Abs(want[a][i])) {
					t.Errorf("%s: particle %d coordinate %d: %v, want %v", c.name, a, i, got[a][i], want[a][i])
				}
			}
		}
	}
}

// A stateful aggregator's state, saved after some steps and set on a
// fresh rule, continues the sequence of directions exactly; malformed
// states are refused.
func TestAggregatedStateResumes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const m, k, d = 3, 2, 5
	newRule := func() *Aggregated {
		return &Aggregated{New: func() aggregate.Aggregator { return &countingAggregator{} }, Particles: m}
	}
	steps := make([]Ensemble, 6)
	for i := range steps {
		steps[i] = randomEnsemble(rng, m, k, d)
		steps[i].Values = randomVectors(rng, k, m, 1)
		steps[i].Step = i
	}
	run := func(r *Aggregated, es []Ensemble) [][]float64 {
		dst := zeros(m, d)
		for _, e := range es {
			if err := r.Direction(dst, e); err != nil {
				t.Fatal(err)
			}
		}
		return dst
	}
	whole := run(newRule(), steps)
	first := newRule()
	run(first, steps[:3])
	resumed := newRule()
	if err := resumed.SetState(first.State()); err != nil {
		t.Fatal(err)
	}
	got := run(resumed, steps[3:])
	for a := range m {
		for i := range d {
			if got[a][i] != whole[a][i] {
				t.Fatalf("particle %d coordinate %d: resumed %v, uninterrupted %v", a, i, got[a][i], whole[a][i])
			}
		}
	}
	good := first.State()
	for _, bad := range [][]float64{nil, good[:len(good)-1], append(append([]float64(nil), good...), 1), {2.5, 1, 1}, {-1}} {
		if err := newRule().SetState(bad); err == nil {
			t.Errorf("state %v: no error", bad)
		}
	}
	stateless := &Aggregated{New: func() aggregate.Aggregator { return meanAggregator{} }, Particles: m}
	if s := stateless.State(); s != nil {
		t.Errorf("state of a stateless aggregator: %v", s)
	}
	if err := stateless.SetState([]float64{1}); err == nil {
		t.Error("a stateless aggregator took a state")
	}
}
