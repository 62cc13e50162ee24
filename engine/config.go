package engine

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/models"
)

// Config describes the networks of an ensemble and the batches they see.
type Config struct {
	Model models.Model
	Tasks []data.Task
	// Batch is the number of examples in one graph run; smaller batches
	// are padded with examples of weight zero.
	Batch int
	// Dtype of the graphs: tensor.Float32 (fast) or tensor.Float64
	// (exact enough for finite-difference tests).
	Dtype tensor.Dtype
	// Device, if not nil, runs the graphs (training and prediction) on a
	// GPU, and holds the ensemble there between steps when the update
	// rules and optimisers have device forms (see resident).
	Device gpu.Device
}

func (c *Config) check() error {
	switch {
	case c.Model == nil:
		return fmt.Errorf("engine: no model")
	case len(c.Tasks) == 0:
		return fmt.Errorf("engine: no tasks")
	case c.Batch < 1:
		return fmt.Errorf("engine: batch size %d", c.Batch)
	case c.Dtype != tensor.Float32 && c.Dtype != tensor.Float64:
		return fmt.Errorf("engine: dtype %v, want float32 or float64", c.Dtype)
	}
	for _, t := range c.Tasks {
		if err := checkTask(t); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
	}
	return nil
}

// ScoreSize is the size in bytes of a trunk score's element on the host:
// a step keeps its K·M trunk scores in float32 when float32 graphs run on
// the CPU, in float64 otherwise (see trunkScores).
func (c *Config) ScoreSize() int {
	if c.Dtype == tensor.Float32 && c.Device == nil {
		return 4
	}
	return 8
}
