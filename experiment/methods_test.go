package experiment

import (
	"math"
	"slices"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/engine"
	"github.com/mtsgd/mtsgd/particles"
)

// One step of each method moves the parameters as its definition says,
// from the per-task gradients of the particles' own graphs: closed forms
// for linear (the mean of the two scores), mgda (for two scores, the
// min-norm point γ·s1 + (1−γ)·s2 with γ = clamp((s2−s1)·s2/‖s1−s2‖², 0, 1))
// and single (each task's network by its own score); the rule functions,
// tested by hand in package particles, for pareto-mtl, moo-svgd and mtsgd.
// Plain SGD step (lr 0.1; momentum's first step is plain); tolerance 1e-9.
func TestOneStepPerMethod(t *testing.T) {
	const lr = 0.1
	for _, method := range []string{"linear", "mgda", "single", "pareto-mtl", "moo-svgd", "mtsgd"} {
		t.Run(method, func(t *testing.T) {
			s := testSettings(1)
			s.Method, s.LR, s.Dtype = method, lr, DtypeFloat64
			r, err := New(s, Data{Train: train, Test: test}, 2)
			if err != nil {
				t.Fatal(err)
			}
			batches := data.Epoch(r.TrainSet, s.Batch, true, s.Seed, 0)
			batches.Next()
			b := batches.Batch()
			before := scoresBefore(t, r, b)
			trunkDir, headDir := wantDirections(t, method, before, batches.Len())
			trunkRule, headRule, err := s.Rules(len(before.heads), batches.Len())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Trainer.Step(b, engine.Update{Trunk: trunkRule, Head: headRule}); err != nil {
				t.Fatal(err)
			}
			for i, p := range r.Trainer.Particles {
				for d := range p.Trunk {
					if want := before.trunks[i][d] + lr*trunkDir[i][d]; math.Abs(p.Trunk[d]-want) > 1e-9 {
						t.Fatalf("particle %d trunk[%d] = %.12g, want %.12g", i, d, p.Trunk[d], want)
					}
				}
				for j := range before.heads {
					for d := range p.Heads[j] {
						if want := before.heads[j][i][d] + lr*headDir[j][i][d]; math.Abs(p.Heads[j][d]-want) > 1e-9 {
							t.Fatalf("particle %d head %d [%d] = %.12g, want %.12g", i, j, d, p.Heads[j][d], want)
						}
					}
				}
			}
		})
	}
}

// ensembleState is a two-task ensemble before a step: its parameters,
// and its scores (minus the loss gradients) and losses on the batch;
// per task j and particle i where indexed [j][i].
type ensembleState struct {
	trunks        [][]float64
	heads, ts, hs [][][]float64 // ts: trunk scores, hs: head scores
	losses        [][]float64
}

// scoresBefore reads r's ensemble and its scores on batch b.
func scoresBefore(t *testing.T, r *Run, b *data.Batch) ensembleState {
	cfg := r.Trainer.Config()
	in := engine.NewInputs(cfg)
	if err := in.Load(cfg, b); err != nil {
		t.Fatal(err)
	}
	m, k := len(r.Trainer.Particles), 2
	e := ensembleState{
		trunks: make([][]float64, m),
		heads:  [][][]float64{make([][]float64, m), make([][]float64, m)},
		ts:     [][][]float64{make([][]float64, m), make([][]float64, m)},
		hs:     [][][]float64{make([][]float64, m), make([][]float64, m)},
		losses: [][]float64{make([]float64, m), make([]float64, m)},
	}
	for i, p := range r.Trainer.Particles {
		e.trunks[i] = slices.Clone(p.Trunk)
		g := engine.NewGrads(cfg)
		if err := r.Trainer.Gradients(i, in, g); err != nil {
			t.Fatal(err)
		}
		for j := range k {
			e.heads[j][i] = slices.Clone(p.Heads[j])
			e.ts[j][i], e.hs[j][i], e.losses[j][i] = g.Trunk[j], g.Head[j], g.Loss[j]
			for _, v := range [][]float64{e.ts[j][i], e.hs[j][i]} {
				for d := range v {
					v[d] = -v[d]
				}
			}
		}
	}
	return e
}

// wantDirections are the directions method should move e's trunks and
// heads in, for epochs of stepsPerEpoch steps.
func wantDirections(t *testing.T, method string, e ensembleState, stepsPerEpoch int) (trunkDir [][]float64, headDir [][][]float64) {
	m, k := len(e.trunks), len(e.heads)
	trunkDir = make([][]float64, m)
	headDir = [][][]float64{make([][]float64, m), make([][]float64, m)}
	for i := range m {
		trunkDir[i] = make([]float64, len(e.trunks[i]))
		for j := range k {
			headDir[j][i] = slices.Clone(e.hs[j][i])
		}
	}
	switch method {
	case "linear":
		for i := range m {
			for d := range trunkDir[i] {
				trunkDir[i][d] = (e.ts[0][i][d] + e.ts[1][i][d]) / 2
			}
		}
	case "mgda":
		for i := range m {
			s1, s2 := e.ts[0][i], e.ts[1][i]
			num, den := 0.0, 0.0
			for d := range s1 {
				num += (s2[d] - s1[d]) * s2[d]
				den += (s1[d] - s2[d]) * (s1[d] - s2[d])
			}
			g := math.Max(0, math.Min(1, num/den))
			for d := range trunkDir[i] {
				trunkDir[i][d] = g*s1[d] + (1-g)*s2[d]
			}
		}
	case "single":
		if len(e.trunks[0]) != 0 {
			t.Fatalf("single has a shared trunk of %d parameters", len(e.trunks[0]))
		}
	default:
		ruleDirections(t, method, e, stepsPerEpoch, trunkDir, headDir)
	}
	return trunkDir, headDir
}

// ruleDirections writes into trunkDir and headDir the directions of the
// rule functions of pareto-mtl, moo-svgd and mtsgd (with SVGD heads but
// for pareto-mtl's own).
func ruleDirections(t *testing.T, method string, e ensembleState, stepsPerEpoch int, trunkDir [][]float64, headDir [][][]float64) {
	m, k := len(e.trunks), len(e.heads)
	var rule particles.Rule
	switch method {
	case "pareto-mtl":
		prefs, _ := particles.Preferences(m, k)
		rule = &particles.ParetoMTL{Prefs: prefs, InitSteps: 2 * stepsPerEpoch}
	case "moo-svgd":
		rule = &particles.MOOSVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
	default:
		rule = &particles.MTSGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
	}
	if err := rule.Direction(trunkDir, particles.Ensemble{Theta: e.trunks, Scores: e.ts, Values: e.losses}); err != nil {
		t.Fatal(err)
	}
	if method == "pareto-mtl" {
		return
	}
	svgd := &particles.SVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 1}
	for j := range k {
		if err := svgd.Direction(headDir[j], particles.Ensemble{Theta: e.heads[j], Scores: [][][]float64{e.hs[j]}}); err != nil {
			t.Fatal(err)
		}
	}
}
