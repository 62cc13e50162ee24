// Package multimnist builds the two-task image data sets of the paper's
// Section 4.2, Multi-MNIST, Multi-Fashion and Multi-Fashion+MNIST, from the
// raw MNIST and Fashion-MNIST IDX files.
//
// The protocol is that of the Multi-MNIST of Sener & Koltun (2018), kept at
// 36×36 as in Pareto MTL and MT-SGD: on a blank 36×36 canvas one 28×28 image
// is placed at rows and columns [0, 28) (top-left), another at [6, 34)
// (bottom-right), and the two are combined by the pixel-wise maximum where
// they overlap. Task 1 is the top-left image's class, task 2 the
// bottom-right one's. Every source image is the top-left image of two
// composites, each with a partner drawn uniformly at random from the
// partner source, so 60,000 training images give 120,000 composites and
// 10,000 test images give 20,000. Training composites use only training
// sources and test composites only test sources. A seed fixes every draw.
//
// Composites are stored as bytes (155 MB for the training set; float32
// would take 622 MB) and scaled to [0, 1] when an example is read.
package multimnist

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"

	"github.com/mtsgd/mtsgd/data"
)

// Geometry of a composite.
const (
	Side0  = 28 // side of a source image
	Side   = 36 // side of a composite
	Offset = 6  // row and column of the bottom-right image's first pixel
	// PerSource is how many composites each source image is the top-left of.
	PerSource = 2
)

// A Variant is one of the three data sets: which source gives the
// top-left and which the bottom-right image.
type Variant struct {
	Name                 string
	TopLeft, BottomRight Source
}

// Variants are the three data sets of the paper.
var Variants = []Variant{
	{"multi-mnist", MNIST, MNIST},
	{"multi-fashion", FashionMNIST, FashionMNIST},
	{"multi-fashion-mnist", MNIST, FashionMNIST},
}

// Load reads the sources of v from dataDir and builds the training and test
// composites with seed.
func (v Variant) Load(dataDir string, seed uint64) (train, test *Set, err error) {
	train, _, test, err = v.LoadValid(dataDir, seed, 0)
	return train, test, err
}

// LoadValid is Load with a validation split of valid composites held out
// of the training ones. valid must be 0 or a positive multiple of
// PerSource below the training composites' count. With 0 there is no
// validation set and the training set is Load's.
//
// The held-out composites share no source image with the training ones:
// the last valid/PerSource training source images are the top-left images
// of the validation composites, and their partners are drawn from those
// same images; the training composites are built from the other source
// images alone. So validation accuracy measures images the networks never
// saw, as test accuracy does, and choices made on it do not look at the
// test set.
func (v Variant) LoadValid(dataDir string, seed uint64, valid int) (train, validation, test *Set, err error) {
	if valid < 0 || valid%PerSource != 0 {
		return nil, nil, nil, fmt.Errorf("multimnist: validation size %d is not a non-negative multiple of %d", valid, PerSource)
	}
	for _, split := range []Split{Train, Test} {
		top, err := v.TopLeft.Read(dataDir, split)
		if err != nil {
			return nil, nil, nil, err
		}
		bottom := top
		if v.BottomRight.Name != v.TopLeft.Name {
			if bottom, err = v.BottomRight.Read(dataDir, split); err != nil {
				return nil, nil, nil, err
			}
		}
		named := func(s *Set) *Set {
			s.tasks[0].ClassNames = v.TopLeft.ClassNames
			s.tasks[1].ClassNames = v.BottomRight.ClassNames
			return s
		}
		switch {
		case split == Test:
			test = named(Compose(v.Name+"/test", top, bottom, seed, v.stream("test")))
		case valid == 0:
			train = named(Compose(v.Name+"/train", top, bottom, seed, v.stream("train")))
		default:
			held := valid / PerSource
			if held >= top.Len() || held >= bottom.Len() {
				return nil, nil, nil, &data.SettingError{Setting: "valid", Value: valid,
					Reason: fmt.Sprintf("leaves no training composites: %s has %d training source images, so at most %d composites can be held out",
						v.Name, min(top.Len(), bottom.Len()), (min(top.Len(), bottom.Len())-1)*PerSource)}
			}
			nTop, nBottom := top.Len()-held, bottom.Len()-held
			train = named(Compose(v.Name+"/train", top.slice(0, nTop), bottom.slice(0, nBottom), seed, v.stream("train")))
			validation = named(Compose(v.Name+"/valid", top.slice(nTop, top.Len()), bottom.slice(nBottom, bottom.Len()), seed, v.stream("valid")))
		}
	}
	return train, validation, test, nil
}

// stream separates the random draws of the variants and their splits
// (train, valid, test) from each other and from the other uses of the
// run's seed: without the variant, Multi-MNIST and Multi-Fashion+MNIST
// would pair the same indices.
func (v Variant) stream(split string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(v.Name + "/" + split))
	return h.Sum64()
}

// Compose builds the composites of top-left images from top and partners
// from bottom, drawing partners from the random stream (seed, stream).
// Composite PerSource·i+r has top.Images.Image(i) as its top-left image.
// The returned set has two 10-class tasks without class names.
func Compose(name string, top, bottom Labeled, seed, stream uint64) *Set {
	n := top.Len() * PerSource
	s := &Set{
		name:   name,
		pixels: make([]byte, n*Side*Side),
		labels: make([]byte, n*2),
		tasks: []data.Task{
			{Name: "top-left", Kind: data.Classification, Classes: 10},
			{Name: "bottom-right", Kind: data.Classification, Classes: 10},
		},
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	for i := range top.Len() {
		for r := range PerSource {
			c := PerSource*i + r
			j := rng.IntN(bottom.Len())
			overlay(s.pixels[c*Side*Side:(c+1)*Side*Side], top.Images.Image(i), bottom.Images.Image(j))
			s.labels[2*c] = top.Labels[i]
			s.labels[2*c+1] = bottom.Labels[j]
		}
	}
	return s
}

// overlay draws a at the top-left and b at the bottom-right of the blank
// canvas dst, keeping the larger value where they overlap.
func overlay(dst, a, b []byte) {
	for r := range Side0 {
		copy(dst[r*Side:r*Side+Side0], a[r*Side0:(r+1)*Side0])
	}
	for r := range Side0 {
		row := dst[(r+Offset)*Side+Offset : (r+Offset)*Side+Offset+Side0]
		for c, v := range b[r*Side0 : (r+1)*Side0] {
			row[c] = max(row[c], v)
		}
	}
}

// Set is one split of a variant. It implements data.Dataset.
type Set struct {
	name   string
	tasks  []data.Task
	pixels []byte // Len()·Side·Side
	labels []byte // Len()·2: top-left, bottom-right
}

func (s *Set) Name() string       { return s.name }
func (s *Set) Tasks() []data.Task { return s.tasks }
func (s *Set) InputShape() []int  { return []int{1, Side, Side} }
func (s *Set) Len() int           { return len(s.labels) / 2 }

// Example writes composite i's pixels, scaled to [0, 1], into x and its two
// labels into y.
func (s *Set) Example(i int, x, y []float32) error {
	if i < 0 || i >= s.Len() {
		return fmt.Errorf("example %d out of range [0, %d)", i, s.Len())
	}
	for p, v := range s.Image(i) {
		x[p] = float32(v) / 255
	}
	y[0], y[1] = float32(s.labels[2*i]), float32(s.labels[2*i+1])
	return nil
}

// Image returns composite i's bytes, row-major Side×Side.
func (s *Set) Image(i int) []byte { return s.pixels[i*Side*Side : (i+1)*Side*Side] }

// Labels returns composite i's top-left and bottom-right labels.
func (s *Set) Labels(i int) (topLeft, bottomRight int) {
	return int(s.labels[2*i]), int(s.labels[2*i+1])
}

// Histogram counts, for each task, how many composites carry each class.
func (s *Set) Histogram() [2][10]int {
	var h [2][10]int
	for i := range s.Len() {
		h[0][s.labels[2*i]]++
		h[1][s.labels[2*i+1]]++
	}
	return h
}
