package engine

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
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
	for j, t := range c.Tasks {
		if t.Kind == data.Classification && t.Classes < 2 {
			return fmt.Errorf("engine: task %s has %d classes", t.Name, t.Classes)
		}
		if t.Kind != data.Classification && t.Kind != data.Regression {
			return fmt.Errorf("engine: task %d has kind %v", j, t.Kind)
		}
	}
	return nil
}

// outputs is the width of task t's head.
func outputs(t data.Task) int {
	if t.Kind == data.Classification {
		return t.Classes
	}
	return 1
}
