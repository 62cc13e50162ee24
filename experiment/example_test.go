package experiment_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/models/mlp"
	"github.com/mtsgd/mtsgd/particles"
)

// A run with a model and an update rule built in Go, registered nowhere:
// NewWith trains it with the commands' loop, saving last/ and best/ after
// every epoch; RestoreWith, given the same components, resumes it from
// last/ for a third epoch.
func ExampleNewWith() {
	out, err := os.MkdirTemp("", "mtsgd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)

	d := experiment.Data{Train: newPoints("points/train", 64, 1), Test: newPoints("points/test", 32, 2)}
	parts := experiment.Components{
		Model: mlp.New(2, []int{16}, 2), // 2 inputs, 16 hidden units, one 2-class head
		Trunk: meanScore{},
		Head:  meanScore{},
	}
	// The common settings (no data set of that name is registered);
	// Model and Method only label the checkpoint here.
	s := experiment.Defaults("points")
	s.Model, s.Method = "mlp-2-16", "mean-score"
	s.Particles, s.Epochs, s.Batch, s.LR, s.Dtype = 2, 2, 16, 0.1, experiment.DtypeFloat64
	s.Warmup = 0

	r, err := experiment.NewWith(s, d, parts, 1)
	if err != nil {
		log.Fatal(err)
	}
	r.Out = out
	if err := r.Train(context.Background()); err != nil {
		log.Fatal(err)
	}

	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		log.Fatal(err)
	}
	resumed, err := experiment.RestoreWith(c, d, parts, 1)
	if err != nil {
		log.Fatal(err)
	}
	resumed.Out, resumed.Settings.Epochs = out, 3
	if err := resumed.Train(context.Background()); err != nil {
		log.Fatal(err)
	}
	for _, l := range resumed.History() {
		fmt.Printf("epoch %d, step %d: %s on %s\n", l.Epoch, l.Step, l.Task, l.Split)
	}
	// Output:
	// epoch 1, step 4: side on test
	// epoch 2, step 8: side on test
	// epoch 3, step 12: side on test
}

// meanScore is an update rule of one's own (particles.Rule): every
// particle follows the mean of its task scores, without interaction.
type meanScore struct{}

func (meanScore) Direction(dst [][]float64, e particles.Ensemble) error {
	for m := range dst {
		clear(dst[m])
		for _, scores := range e.Scores {
			for i, s := range scores[m] {
				dst[m][i] += s / float64(len(e.Scores))
			}
		}
	}
	return nil
}

// points is a data set held in memory: points of the plane, labelled by
// the side of the line y = x they lie on.
type points struct {
	name string
	xy   [][2]float32
}

func newPoints(name string, n int, seed float64) *points {
	p := &points{name: name}
	for i := range n {
		a := float64(i) + seed
		p.xy = append(p.xy, [2]float32{float32(math.Sin(1.3 * a)), float32(math.Cos(0.7 * a))})
	}
	return p
}

func (p *points) Name() string { return p.name }
func (p *points) Tasks() []data.Task {
	return []data.Task{{Name: "side", Kind: data.Classification, Classes: 2}}
}
func (p *points) InputShape() []int { return []int{2} }
func (p *points) Len() int          { return len(p.xy) }
func (p *points) Example(i int, x, y []float32) error {
	x[0], x[1] = p.xy[i][0], p.xy[i][1]
	y[0] = 0
	if p.xy[i][1] > p.xy[i][0] {
		y[0] = 1
	}
	return nil
}
