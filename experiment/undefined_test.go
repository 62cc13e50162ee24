package experiment

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mtsgd/mtsgd/particles"
	"github.com/mtsgd/mtsgd/particles/aggregate"
)

// undefinedAt is a trunk rule that moves like Linear until its call
// number at, and then fails as IMTL-G does when the gradients leave its
// direction undefined.
type undefinedAt struct {
	at, calls int
	linear    particles.Linear
}

func (r *undefinedAt) Direction(dst [][]float64, e particles.Ensemble) error {
	if r.calls++; r.calls == r.at {
		return fmt.Errorf("imtl-g: DUᵀ is singular: %w", aggregate.ErrUndefined)
	}
	return r.linear.Direction(dst, e)
}

// A method whose direction the gradients leave undefined stops the run as
// a divergence does (ErrDiverged, the error still naming the cause), so
// that a learning-rate search records the rate as diverged rather than
// stopping; the epoch it stopped in is not recorded.
func TestUndefinedDirectionIsADivergence(t *testing.T) {
	s := testSettings(2)
	r, err := NewWith(s, Data{Train: train, Test: test}, Components{Trunk: &undefinedAt{at: 4}, Head: &particles.Linear{}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	r.Out = t.TempDir()
	err = r.Train(context.Background())
	if !errors.Is(err, ErrDiverged) || !errors.Is(err, aggregate.ErrUndefined) {
		t.Fatalf("error %v: want one wrapping ErrDiverged and aggregate.ErrUndefined", err)
	}
	if h := r.History(); len(h) == 0 || h[len(h)-1].Epoch != 1 {
		t.Errorf("history %v: want epoch 1 alone (3 steps an epoch, the 4th failed)", h)
	}
}
