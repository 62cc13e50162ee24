package files

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/data"
)

// labelNotes counts each task's missing labels in the training split,
// and refuses a task without one there.
func (d *Data) labelNotes() error {
	k := len(d.Train.tasks)
	for j, t := range d.Train.tasks {
		missing := 0
		for i := range d.Train.Len() {
			if math.IsNaN(float64(d.Train.y[d.Train.rows(i)*k+j])) {
				missing++
			}
		}
		switch {
		case missing == d.Train.Len():
			return fmt.Errorf("%w: %s: task %s has no label in the training split: every one is missing", data.ErrInvalid, d.Train.path, t.Name)
		case missing > 0 && k == 1:
			d.Notes = append(d.Notes, fmt.Sprintf("task %s: %d of the %d training labels are missing: those rows are left out of training and scores", t.Name, missing, d.Train.Len()))
		case missing > 0:
			d.Notes = append(d.Notes, fmt.Sprintf("task %s: %d of the %d training labels are missing: those rows train the other tasks, and scores skip them", t.Name, missing, d.Train.Len()))
		}
	}
	return nil
}

// targetScales are the mean and standard deviation of each regression
// task's targets on the split (a constant target's deviation is 1).
func (s *Set) targetScales() (map[string]Scale, error) {
	var out map[string]Scale
	k := len(s.tasks)
	for j, t := range s.tasks {
		if t.Kind != data.Regression {
			continue
		}
		// A positive task's scale is that of log y, what it trains on.
		value := func(i int) float64 {
			v := float64(s.y[s.rows(i)*k+j])
			if t.Log {
				return math.Log(v)
			}
			return v
		}
		var sum, n float64
		for i := range s.Len() {
			if v := value(i); !math.IsNaN(v) {
				sum += v
				n++
			}
		}
		mean := sum / n
		var sq float64
		for i := range s.Len() {
			if v := value(i); !math.IsNaN(v) {
				sq += (v - mean) * (v - mean)
			}
		}
		std := math.Sqrt(sq / n)
		if !(std > 0) {
			std = 1
		}
		if math.IsInf(mean, 0) || math.IsInf(std, 0) {
			return nil, fmt.Errorf("%w: %s: task %s's targets overflow float64 statistics", data.ErrInvalid, s.path, t.Name)
		}
		if out == nil {
			out = map[string]Scale{}
		}
		out[t.Name] = Scale{Mean: mean, Std: std}
	}
	return out, nil
}

// normalization computes the input transform on the training split.
func (desc Description) normalization(train *Set) (*Normalization, error) {
	n := &Normalization{Kind: desc.Input}
	if n.Kind != Standardize {
		return n, nil
	}
	groups := train.size / train.per
	sum, sq := make([]float64, groups), make([]float64, groups)
	cnt := float64(train.Len()) * float64(train.per)
	// Two passes (mean, then squared deviations) for accuracy.
	for pass := range 2 {
		for i := range train.Len() {
			base := train.rows(i) * train.size
			for p := range train.size {
				g := p / train.per
				v := train.raw(base + p)
				if pass == 0 {
					sum[g] += v
				} else {
					d := v - n.Mean[g]
					sq[g] += d * d
				}
			}
		}
		if pass == 0 {
			n.Mean = make([]float64, groups)
			for g := range sum {
				n.Mean[g] = sum[g] / cnt
			}
		}
	}
	n.Std = make([]float64, groups)
	for g := range sq {
		n.Std[g] = math.Sqrt(sq[g] / cnt)
		if !(n.Std[g] > 0) {
			n.Std[g] = 1 // a constant channel: centred, not scaled
		}
		if math.IsInf(n.Mean[g], 0) || math.IsInf(n.Std[g], 0) {
			return nil, fmt.Errorf("%w: %s: the inputs' %s %d overflow float64 statistics", data.ErrInvalid, train.path, train.groupName(), g)
		}
	}
	return n, nil
}
