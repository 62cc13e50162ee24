package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mtsgd/mtsgd/cmd/internal/imagegrid"
	"github.com/mtsgd/mtsgd/data"
)

// Layout of the -show grid.
const (
	showCount = 16 // examples shown
	showTasks = 3  // task lines per cell
)

// errNotImages is newTopMI's error for inputs it cannot draw: predict
// warns and writes the predictions without the picture.
var errNotImages = errors.New("-show draws images of 1 or 3 channels")

// shown is one example kept for the grid.
type shown struct {
	index  int
	mi     float64
	input  []float32 // as the model read it (normalised)
	labels []string  // per task: predicted label and confidence, or mean
}

// topMI keeps the showCount examples with the highest mutual information
// on one task, as the prediction streams by.
type topMI struct {
	task  int
	shape []int // C×H×W, C 1 or 3
	keep  []shown
}

// newTopMI checks that the inputs are images it can draw and the task
// one with a mutual information.
func newTopMI(shape []int, tasks []data.Task, name string) (*topMI, error) {
	if len(shape) != 3 || (shape[0] != 1 && shape[0] != 3) {
		return nil, fmt.Errorf("%w; the inputs have shape %v", errNotImages, shape)
	}
	for j, t := range tasks {
		if (name == "" || t.Name == name) && t.Kind == data.Classification {
			return &topMI{task: j, shape: shape}, nil
		}
	}
	if name == "" {
		return nil, fmt.Errorf("-show ranks examples by a classification task's mutual information; the run has none")
	}
	return nil, fmt.Errorf("-show-task %q is not one of the run's classification tasks", name)
}

// offer considers an example for the grid; labels is called only for an
// example kept.
func (t *topMI) offer(index int, mi float64, input []float32, labels func() []string) {
	if len(t.keep) == showCount && !(mi > t.keep[len(t.keep)-1].mi) {
		return
	}
	s := shown{index: index, mi: mi, input: slices.Clone(input), labels: labels()}
	at, _ := slices.BinarySearchFunc(t.keep, mi, func(s shown, mi float64) int {
		if s.mi >= mi {
			return -1 // descending: equal values keep the earlier example first
		}
		return 1
	})
	t.keep = slices.Insert(t.keep, at, s)
	if len(t.keep) > showCount {
		t.keep = t.keep[:showCount]
	}
}

// write draws the kept examples in a grid, most disagreed-on first, each
// with its index, its mutual information and the ensemble's labels. Each
// image is stretched to its own range, the inputs being normalised.
func (t *topMI) write(w io.Writer, tasks []data.Task) error {
	lines := 1 + min(len(tasks), showTasks)
	cells := make([]imagegrid.Cell, len(t.keep))
	for k, s := range t.keep {
		lo, hi := slices.Min(s.input), slices.Max(s.input)
		cells[k].Pixels = make([]float32, len(s.input))
		for i, v := range s.input {
			if hi > lo {
				cells[k].Pixels[i] = (v - lo) / (hi - lo)
			}
		}
		cells[k].Lines = append([]string{fmt.Sprintf("#%d  MI %.3f (%s)", s.index, s.mi, tasks[t.task].Name)}, s.labels...)
	}
	return imagegrid.Write(w, t.shape, cells, lines)
}
