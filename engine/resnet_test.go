package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/models/resnet18"
)

// smallResNet is ResNet-18 at width 2 on 3×16×16 inputs with two tasks of
// 2 and 3 classes: the same code as the standard network, small enough
// for finite differences.
func smallResNet(batch int) *Config {
	tasks := []data.Task{{Name: "a", Kind: data.Classification, Classes: 2}, {Name: "b", Kind: data.Classification, Classes: 3}}
	return &Config{Model: resnet18.Small(2, 16, 2, 3), Tasks: tasks, Batch: batch, Dtype: tensor.Float64}
}

func imageBatch(rng *rand.Rand, n int, classes ...int) *data.Batch {
	b := &data.Batch{Inputs: make([]float32, n*3*16*16), Targets: make([][]float32, len(classes))}
	for i := range b.Inputs {
		b.Inputs[i] = rng.Float32()
	}
	for i := range n {
		b.Index = append(b.Index, i)
		for j, c := range classes {
			b.Targets[j] = append(b.Targets[j], float32(rng.IntN(c)))
		}
	}
	return b
}

// Through batch normalisation in training mode, each task's trunk and
// head gradients match central finite differences (h = 1e-6,
// |fd − g| ≤ 1e-6 + 1e-4·|g|, float64), with a padded batch (4 real
// examples of 5) so that the example weights in the batch statistics are
// part of what is checked. Two coordinates of every tensor.
func TestResNetGradientsMatchFiniteDifferences(t *testing.T) {
	cfg := smallResNet(5)
	p := newTestParticle(t, cfg, 21)
	rng := rand.New(rand.NewPCG(22, 0))
	in := load(t, cfg, imageBatch(rng, 4, 2, 3))
	for task := range 2 {
		checkFiniteDifferences(t, cfg, p, in, rng, task, 2)
	}
}

// Padding rows take no part in the batch statistics: a batch of 3 padded
// to 6 gives the loss and gradients of the same 3 in a graph of 3, to
// rounding (1e-11·(1+|g|); padding counted in the statistics would change
// them in the first digits).
func TestResNetPaddingIsInvisible(t *testing.T) {
	b := imageBatch(rand.New(rand.NewPCG(23, 0)), 3, 2, 3)
	exact, padded := smallResNet(3), smallResNet(6)
	pe, pp := newTestParticle(t, exact, 24), newTestParticle(t, padded, 24)
	for task := range 2 {
		ge := gradients(t, pe, load(t, exact, b), task)
		gp := gradients(t, pp, load(t, padded, b), task)
		if math.Abs(ge.loss-gp.loss) > 1e-12 {
			t.Errorf("task %d: loss %v exact, %v padded", task, ge.loss, gp.loss)
		}
		for i := range ge.trunk {
			if math.Abs(ge.trunk[i]-gp.trunk[i]) > 1e-11*(1+math.Abs(ge.trunk[i])) {
				t.Fatalf("task %d trunk[%d]: %v exact, %v padded", task, i, ge.trunk[i], gp.trunk[i])
			}
		}
	}
}

// Evaluation uses the running statistics: Predict with the initial ones
// (mean 0, variance 1) gives other logits than training mode; with the
// running statistics set to the batch's own (biased) statistics it gives
// exactly training mode's loss (1e-12). A training step moves the running
// statistics by PyTorch's rule from the batch's.
func TestResNetEvaluationUsesRunningStatistics(t *testing.T) {
	cfg := smallResNet(5)
	p := newTestParticle(t, cfg, 25)
	b := imageBatch(rand.New(rand.NewPCG(26, 0)), 5, 2, 3)
	in := load(t, cfg, b)
	lossFromPredict := func(task int) float64 {
		outs, err := predict(t, p, in)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg.Tasks[task].Classes
		loss := 0.0
		for i := range in.N {
			row := outs[task][i*c : (i+1)*c]
			m := slices.Max(row)
			s := 0.0
			for _, z := range row {
				s += math.Exp(z - m)
			}
			loss += (m + math.Log(s) - row[int(b.Targets[task][i])]) / float64(in.N)
		}
		return loss
	}
	initial := slices.Clone(p.Stats)
	g := NewGrads(cfg)
	mc := machineFor(t, cfg)
	if err := mc.gradients(p, in, g, true, nil); err != nil {
		t.Fatal(err)
	}
	train := g.Loss[0]
	if got := lossFromPredict(0); math.Abs(got-train) < 1e-3 {
		t.Errorf("evaluation with the initial statistics gives training mode's loss %v", got)
	}
	batch := slices.Clone(g.Stats)
	copy(p.Stats, batch)
	if got := lossFromPredict(0); math.Abs(got-train) > 1e-12 {
		t.Errorf("evaluation with the batch's statistics: loss %.15g, training mode %.15g", got, train)
	}

	copy(p.Stats, initial)
	if err := mc.updateStats(p, batch, in.N); err != nil {
		t.Fatal(err)
	}
	// Layer 0 (bn1) normalises 5 examples × 8×8 values per channel.
	n := 5.0 * 8 * 8
	for c := range 2 {
		if want := 0.1 * batch[c]; math.Abs(p.Stats[c]-want) > 1e-15 {
			t.Errorf("bn1 running mean[%d] = %v, want %v", c, p.Stats[c], want)
		}
		if want := 0.9 + 0.1*batch[2+c]*n/(n-1); math.Abs(p.Stats[2+c]-want) > 1e-15 {
			t.Errorf("bn1 running variance[%d] = %v, want %v", c, p.Stats[2+c], want)
		}
	}
}
