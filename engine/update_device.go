package engine

import (
	"fmt"

	"github.com/mtsgd/mtsgd/particles"
)

// scaleOnDevice is scale for a resident ensemble.
func (tr *Trainer) scaleOnDevice(u Update, heads bool) error {
	r := tr.res
	scores := []matrix{r.trunkScore}
	if heads {
		scores = r.headScore
	}
	switch u.Scale {
	case ScoreMean:
	case ScoreSum:
		if u.Examples < 1 {
			return fmt.Errorf("engine: score scale sum needs the training set's size, got %d", u.Examples)
		}
		for _, s := range scores {
			n := s.rows * s.cols
			if err := r.dev.Launch("scale_f64", max(1, n), s.p, float64(u.Examples), n); err != nil {
				return err
			}
		}
	case ScoreNormalized:
		if heads {
			return nil
		}
		s := r.trunkScore
		for j := range r.k {
			if err := r.dev.Launch("normalize_columns", max(1, s.cols), s.row(j*r.m), r.m, s.cols, particles.NormalizeFloor); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("engine: unknown score scale %v", u.Scale)
	}
	return nil
}
