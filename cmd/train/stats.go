package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mtsgd/mtsgd/data"
)

// writeStats prints the size and input shape of d and, per task, the class
// histogram (classification; each class's count followed by its name
// where the classes have names) or the range and mean (regression).
func writeStats(w io.Writer, d data.Dataset) error {
	tasks := d.Tasks()
	shape := make([]string, len(d.InputShape()))
	for i, s := range d.InputShape() {
		shape[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(w, "%s: %d examples, input %s, %d tasks\n", d.Name(), d.Len(), strings.Join(shape, "×"), len(tasks))

	counts := make([][]int, len(tasks))
	sum := make([]float64, len(tasks))
	lo := make([]float64, len(tasks))
	hi := make([]float64, len(tasks))
	missing := make([]int, len(tasks))
	for j, t := range tasks {
		counts[j] = make([]int, t.Classes)
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	batches := data.Epoch(d, 4096, false, 0, 0)
	for batches.Next() {
		for j, t := range tasks {
			for _, y := range batches.Batch().Targets[j] {
				if y != y { // a missing label
					missing[j]++
					continue
				}
				if t.Kind == data.Classification {
					c := int(y)
					if c < 0 || c >= t.Classes {
						return fmt.Errorf("%s: task %s has target %v, not a class 0..%d", d.Name(), t.Name, y, t.Classes-1)
					}
					counts[j][c]++
					continue
				}
				sum[j] += float64(y)
				lo[j], hi[j] = min(lo[j], float64(y)), max(hi[j], float64(y))
			}
		}
	}
	if err := batches.Err(); err != nil {
		return err
	}
	for j, t := range tasks {
		if missing[j] > 0 {
			fmt.Fprintf(w, "  %-14s %d labels missing\n", t.Name, missing[j])
		}
		if t.Kind == data.Regression {
			fmt.Fprintf(w, "  %-14s regression: mean %.4g, min %.4g, max %.4g\n", t.Name, sum[j]/float64(d.Len()-missing[j]), lo[j], hi[j])
			continue
		}
		fewest, most := d.Len(), 0
		var cells []string
		for c, n := range counts[j] {
			fewest, most = min(fewest, n), max(most, n)
			cell := fmt.Sprintf("%d:%d", c, n)
			if c < len(t.ClassNames) {
				cell += " (" + t.ClassNames[c] + ")"
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(w, "  %-14s %s  (min/max %.3f, uniform %.1f)\n", t.Name, strings.Join(cells, " "),
			float64(fewest)/float64(most), float64(d.Len())/float64(t.Classes))
	}
	return nil
}
