package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models/mlp"
)

// The regression path (MLP, squared-error loss) passes the same checks as
// the classification one: each task's trunk and head gradients against
// central finite differences (h = 1e-6, |fd − g| ≤ 1e-6 + 1e-4·|g|, on a
// float64 graph), and the loss against its definition, the batch mean of
// (prediction − target)², computed in Go from Predict's outputs.
func TestRegressionGradients(t *testing.T) {
	tasks := []data.Task{{Name: "t1", Kind: data.Regression}, {Name: "t2", Kind: data.Regression}, {Name: "t3", Kind: data.Regression}}
	cfg := &Config{Model: mlp.New(5, []int{8, 6}, 1, 1, 1), Tasks: tasks, Batch: 7, Dtype: tensor.Float64}
	p, err := NewParticle(cfg, rand.New(rand.NewPCG(31, 0)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(32, 0))
	b := &data.Batch{Targets: make([][]float32, 3)}
	for i := range 6 { // 6 of 7 rows: padding too
		b.Index = append(b.Index, i)
		for range 5 {
			b.Inputs = append(b.Inputs, float32(rng.NormFloat64()))
		}
		for j := range 3 {
			b.Targets[j] = append(b.Targets[j], float32(rng.NormFloat64()))
		}
	}
	in := NewInputs(cfg)
	if err := in.Load(cfg, b); err != nil {
		t.Fatal(err)
	}
	outs, err := predict(t, p, in)
	if err != nil {
		t.Fatal(err)
	}
	for task := range 3 {
		g := gradients(t, p, in, task)
		want := 0.0
		for i := range 6 {
			d := outs[task][i] - float64(b.Targets[task][i])
			want += d * d / 6
		}
		if math.Abs(g.loss-want) > 1e-12 {
			t.Errorf("task %d: loss %.15g, mean squared error %.15g", task, g.loss, want)
		}
		checkFiniteDifferences(t, cfg, p, in, rng, task, 3)
	}
}
