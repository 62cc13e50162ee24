package experiment

import (
	"context"
	"fmt"
	"reflect"

	"github.com/mtsgd/mtsgd/data"
)

// evaluate scores the ensemble on the validation set, if any, and the test
// set, one line per split and task.
func (r *Run) evaluate(ctx context.Context, lr float64) ([]MetricsLine, error) {
	var lines []MetricsLine
	for _, split := range []struct {
		name string
		set  data.Dataset
	}{{"valid", r.ValidSet}, {"test", r.TestSet}} {
		if split.set == nil {
			continue
		}
		if split.name == "test" && samePointer(r.TestSet, r.ValidSet) && len(lines) > 0 {
			// The validation split serves as the test split (a file data
			// set without test files): its scores, computed once.
			for _, l := range lines[:len(lines):len(lines)] {
				l.Split = "test"
				lines = append(lines, l)
			}
			continue
		}
		out, labels, err := r.Trainer.Outputs(ctx, split.set)
		if err != nil {
			return nil, fmt.Errorf("evaluating on %s: %w", split.set.Name(), err)
		}
		scores, err := r.Trainer.Score(out, labels)
		if err != nil {
			return nil, fmt.Errorf("evaluating on %s: %w", split.set.Name(), err)
		}
		if split.name == "valid" && split.set.Len() >= MinCalibrationExamples {
			// A fit fails only on scores that are not finite, which the
			// run reports as a divergence of its own: no temperatures.
			r.temperatures, _ = FitTemperatures(split.set.Tasks(), out, labels)
			if r.temperatures != nil && r.smallData() {
				if KeepSignificantTemperatures(split.set.Tasks(), out, labels, r.temperatures) != nil {
					r.temperatures = nil
				}
			}
		}
		for j, s := range scores {
			var perParticle []float64
			if r.particleLoss != nil {
				perParticle = make([]float64, len(r.particleLoss[j]))
				for i, v := range r.particleLoss[j] {
					perParticle[i] = v / float64(max(1, r.batch))
				}
			}
			lines = append(lines, MetricsLine{
				Epoch: r.epoch + 1, Step: r.Trainer.Steps, Split: split.name, Task: s.Task, LR: lr,
				Loss: r.lossSum[j] / float64(max(1, r.batch)), Score: s.Ensemble, Particles: s.Particles,
				ParticleLoss: perParticle,
			})
		}
	}
	return lines, nil
}

// samePointer reports whether a and b are the same pointer: one data
// set serving as two splits.
func samePointer(a, b data.Dataset) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Kind() == reflect.Pointer && vb.Kind() == reflect.Pointer && va.Pointer() == vb.Pointer() && va.Type() == vb.Type()
}
