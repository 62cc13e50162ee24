package testenv

import (
	"math/rand/v2"

	"github.com/mtsgd/mtsgd/data"
)

// Images is a small synthetic data set shaped as Multi-MNIST (1×36×36
// inputs, two 10-class tasks, top-left and bottom-right), to run the
// commands' code without the real data: random pixels, labels a function
// of two of them.
func Images(name string, n int, seed uint64) data.Dataset {
	rng := rand.New(rand.NewPCG(seed, 0))
	d := &images{name: name, x: make([]float32, n*side*side)}
	for i := range d.x {
		d.x[i] = rng.Float32()
	}
	for i := range n {
		x := d.x[i*side*side:]
		d.y = append(d.y, [2]float32{float32(int(x[0]*10) % 10), float32(int(x[700]*10) % 10)})
	}
	return d
}

const side = 36

type images struct {
	name string
	x    []float32
	y    [][2]float32
}

func (d *images) Name() string { return d.name }
func (d *images) Tasks() []data.Task {
	return []data.Task{
		{Name: "top-left", Kind: data.Classification, Classes: 10},
		{Name: "bottom-right", Kind: data.Classification, Classes: 10},
	}
}
func (d *images) InputShape() []int { return []int{1, side, side} }
func (d *images) Len() int          { return len(d.y) }
func (d *images) Example(i int, x, y []float32) error {
	copy(x, d.x[i*side*side:(i+1)*side*side])
	y[0], y[1] = d.y[i][0], d.y[i][1]
	return nil
}
