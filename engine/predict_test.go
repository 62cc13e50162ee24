package engine

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/metrics"
)

// Predict hands over each batch's per-particle probabilities (the last
// batch short), equal to those of one graph run on all the examples; an
// error from the callback stops it.
func TestPredict(t *testing.T) {
	const n = 10
	d := memory{randomBatch(rand.New(rand.NewPCG(26, 0)), n, 2)}
	e := newTestTrainer(t, 3, 4, 0.1)
	got := make([][][]float64, 2) // [task][particle] all examples
	for j := range got {
		got[j] = make([][]float64, 3)
	}
	var sizes []int
	err := e.Predict(context.Background(), d, func(b *data.Batch, pred [][][]float64) error {
		sizes = append(sizes, b.Size())
		for j := range pred {
			for i, p := range pred[j] {
				if len(p) != b.Size()*10 {
					t.Fatalf("task %d particle %d: %d values for %d examples", j, i, len(p), b.Size())
				}
				got[j][i] = append(got[j][i], p...)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 3 || sizes[2] != 2 {
		t.Errorf("batches of %v, want 4, 4, 2", sizes)
	}
	one := testConfig(n, tensor.Float64)
	in := load(t, one, d.b)
	for i, p := range e.Particles {
		q, err := NewParticle(one, rand.New(rand.NewPCG(0, 0)))
		if err != nil {
			t.Fatal(err)
		}
		copy(q.Trunk, p.Trunk)
		for j := range q.Heads {
			copy(q.Heads[j], p.Heads[j])
		}
		out, err := predict(t, q, in)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			want := make([]float64, n*10)
			metrics.Softmax(want, out[j], 10)
			for k := range want {
				if math.Abs(got[j][i][k]-want[k]) > 1e-12 {
					t.Fatalf("task %d particle %d value %d: %v, want %v", j, i, k, got[j][i][k], want[k])
				}
			}
		}
	}
	stop := errors.New("stop")
	calls := 0
	err = e.Predict(context.Background(), d, func(*data.Batch, [][][]float64) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("callback error: %v after %d calls", err, calls)
	}
}
