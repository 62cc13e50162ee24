package main

import (
	"fmt"
	"io"

	"github.com/mtsgd/mtsgd/cmd/internal/imagegrid"
	"github.com/mtsgd/mtsgd/data"
)

// previewMaxTsk is the most task lines per cell; more are summarised in
// one line.
const previewMaxTsk = 4

// writePreview draws the first n examples of one shuffled epoch of d in a
// grid, with each task's label printed under each image, as a PNG. The
// input must be an image: [1 H W] (grey) or [3 H W] (RGB), values in [0,1].
func writePreview(w io.Writer, d data.Dataset, n int, seed uint64) error {
	shape := d.InputShape()
	if len(shape) != 3 || (shape[0] != 1 && shape[0] != 3) {
		return fmt.Errorf("%s: inputs of shape %v are not images", d.Name(), shape)
	}
	batches := data.Epoch(d, n, true, seed, 0)
	if !batches.Next() {
		if err := batches.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%s is empty", d.Name())
	}
	b := batches.Batch()
	tasks := d.Tasks()
	lines := min(len(tasks), previewMaxTsk)
	in := data.InputSize(d)
	cells := make([]imagegrid.Cell, b.Size())
	for k := range cells {
		cells[k].Pixels = b.Inputs[k*in : (k+1)*in]
		for j := range lines {
			text := fmt.Sprintf("%s: %s", tasks[j].Name, targetText(tasks[j], b.Targets[j][k]))
			if j == lines-1 && lines < len(tasks) {
				text = fmt.Sprintf("... %d more tasks", len(tasks)-lines+1)
			}
			cells[k].Lines = append(cells[k].Lines, text)
		}
	}
	return imagegrid.Write(w, shape, cells, lines)
}

// targetText is a target as a person reads it: the class name when the task
// has names, else the class number or the value.
func targetText(t data.Task, y float32) string {
	if y != y {
		return "missing"
	}
	if t.Kind == data.Classification {
		c := int(y)
		if c >= 0 && c < len(t.ClassNames) {
			return t.ClassNames[c]
		}
		return fmt.Sprint(c)
	}
	return fmt.Sprintf("%.3g", y)
}
