package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models/mlp"
	"github.com/mtsgd/mtsgd/optim"
)

var nan = float32(math.NaN())

// missingBatch is 6 examples (of a batch of 7: padding too) of 5
// inputs, a 3-class task and a regression task in thousands, some of
// whose targets are missing: example 2 has neither.
func missingBatch(rng *rand.Rand) *data.Batch {
	b := &data.Batch{Targets: [][]float32{
		{0, nan, nan, 2, 1, 1},
		{4100, 5020, nan, nan, 3900, 4480},
	}}
	for i := range 6 {
		b.Index = append(b.Index, i)
		for range 5 {
			b.Inputs = append(b.Inputs, float32(rng.NormFloat64()))
		}
	}
	return b
}

var missingTasks = []data.Task{
	{Name: "class", Kind: data.Classification, Classes: 3},
	{Name: "value", Kind: data.Regression, Shift: 4200, Scale: 800},
}

// A missing target (NaN) takes no part in its task's loss: the loss is
// the mean over the examples that have a target, of the cross-entropy
// and of the squared error on the standardised scale ((y − Shift)/Scale,
// against the output Predict maps back to the data's units); and the
// gradients are that loss's, by central finite differences.
func TestMissingTargetsLoss(t *testing.T) {
	cfg := &Config{Model: mlp.New(5, []int{8, 6}, 3, 1), Tasks: missingTasks, Batch: 7, Dtype: tensor.Float64}
	p, err := NewParticle(cfg, rand.New(rand.NewPCG(41, 0)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 0))
	b := missingBatch(rng)
	in := load(t, cfg, b)
	outs, err := predict(t, p, in)
	if err != nil {
		t.Fatal(err)
	}
	probs := make([]float64, len(outs[0]))
	kindOf(missingTasks[0]).predict(missingTasks[0], probs, outs[0])
	var want [2]float64
	var n [2]int
	for i := range 6 {
		if y := b.Targets[0][i]; y == y {
			want[0] -= math.Log(probs[i*3+int(y)])
			n[0]++
		}
		if y := b.Targets[1][i]; y == y {
			pred := missingTasks[1].Unstandardize(outs[1][i])
			d := (pred - float64(y)) / 800
			want[1] += d * d
			n[1]++
		}
	}
	for task := range 2 {
		want[task] /= float64(n[task])
		g := gradients(t, p, in, task)
		if math.Abs(g.loss-want[task]) > 1e-9*math.Abs(want[task]) {
			t.Errorf("task %d: loss %.15g, the mean over the %d examples with a target %.15g", task, g.loss, n[task], want[task])
		}
		checkFiniteDifferences(t, cfg, p, in, rng, task, 3)
	}
	// Example 2, without any target, changes no gradient: the batch
	// without it has the same task gradients (batch norm aside: the MLP
	// has none).
	var short data.Batch
	short.Targets = make([][]float32, 2)
	for i := range 6 {
		if i == 2 {
			continue
		}
		short.Index = append(short.Index, len(short.Index))
		short.Inputs = append(short.Inputs, b.Inputs[i*5:(i+1)*5]...)
		for j := range 2 {
			short.Targets[j] = append(short.Targets[j], b.Targets[j][i])
		}
	}
	in2 := load(t, cfg, &short)
	for task := range 2 {
		a, c := gradients(t, p, in, task), gradients(t, p, in2, task)
		for k := range a.head {
			if math.Abs(a.head[k]-c.head[k]) > 1e-12 {
				t.Fatalf("task %d head gradient %d: %v with the example without targets, %v without it", task, k, a.head[k], c.head[k])
			}
		}
	}
}

// Evaluate scores each task on the examples that have its label, and
// regression in the data's units.
func TestMissingTargetsScores(t *testing.T) {
	cfg := &Config{Model: mlp.New(5, []int{8}, 3, 1), Tasks: missingTasks, Batch: 4, Dtype: tensor.Float32}
	tr, err := New(cfg, 2, 1, func() optim.Optimizer { return optim.NewAdam(0.01) }, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := missingBatch(rand.New(rand.NewPCG(5, 0)))
	d := batchSet{b: b, tasks: missingTasks}
	out, labels, err := tr.Outputs(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	scores, err := tr.Score(out, labels)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: the ensemble's mean prediction against the labels there.
	var mse float64
	var n int
	for i, y := range b.Targets[1] {
		if y != y {
			continue
		}
		p := (out[1][0][i] + out[1][1][i]) / 2
		mse += (p - float64(y)) * (p - float64(y))
		n++
	}
	mse /= float64(n)
	if got := scores[1].Ensemble.MSE; math.Abs(got-mse) > 1e-9*mse {
		t.Errorf("MSE %v, by hand over the %d labelled examples %v", got, n, mse)
	}
	// The outputs are in the data's units: around 4200, not 0.
	if m := (out[1][0][0] + out[1][1][0]) / 2; m < 1000 {
		t.Errorf("regression output %v: not mapped back to the data's units", m)
	}
	var correct float64
	n = 0
	for i, y := range b.Targets[0] {
		if y != y {
			continue
		}
		best := 0
		for c := range 3 {
			if out[0][0][i*3+c]+out[0][1][i*3+c] > out[0][0][i*3+best]+out[0][1][i*3+best] {
				best = c
			}
		}
		if best == int(y) {
			correct++
		}
		n++
	}
	if got := scores[0].Ensemble.Accuracy; got != correct/float64(n) {
		t.Errorf("accuracy %v, by hand over the %d labelled examples %v", got, n, correct/float64(n))
	}
	// Where every example misses a task's label, scoring says so.
	for i := range labels[0] {
		labels[0][i] = math.NaN()
	}
	if _, err := tr.Score(out, labels); err == nil {
		t.Error("scores of a task without any label")
	}
}

// batchSet is a data set of one batch's examples.
type batchSet struct {
	b     *data.Batch
	tasks []data.Task
}

func (d batchSet) Name() string       { return "batch" }
func (d batchSet) Tasks() []data.Task { return d.tasks }
func (d batchSet) InputShape() []int  { return []int{len(d.b.Inputs) / d.b.Size()} }
func (d batchSet) Len() int           { return d.b.Size() }
func (d batchSet) Example(i int, x, y []float32) error {
	w := len(x)
	copy(x, d.b.Inputs[i*w:(i+1)*w])
	for j := range d.tasks {
		y[j] = d.b.Targets[j][i]
	}
	return nil
}
