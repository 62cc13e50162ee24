package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"slices"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/mtsgd/mtsgd/data"
)

// Layout of the -show grid.
const (
	showCount = 16 // examples shown
	showCols  = 4
	showZoom  = 4  // screen pixels per image pixel
	showPad   = 8  // space around each cell
	showLineH = 14 // a line of basicfont.Face7x13
	showChars = 26 // widest line, in characters
	showTasks = 3  // task lines per cell
)

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
		return nil, fmt.Errorf("-show draws images of 1 or 3 channels; the inputs have shape %v", shape)
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
	ch, h, wd := t.shape[0], t.shape[1], t.shape[2]
	lines := 1 + min(len(tasks), showTasks)
	cellW := max(wd*showZoom, showChars*7) + 2*showPad
	cellH := h*showZoom + lines*showLineH + 2*showPad
	rows := max(1, (len(t.keep)+showCols-1)/showCols)
	img := image.NewRGBA(image.Rect(0, 0, showCols*cellW, rows*cellH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for k, s := range t.keep {
		x0, y0 := (k%showCols)*cellW+showPad, (k/showCols)*cellH+showPad
		lo, hi := slices.Min(s.input), slices.Max(s.input)
		scale := func(v float32) uint8 {
			if hi == lo {
				return 0
			}
			return uint8(math.Round(float64((v - lo) / (hi - lo) * 255)))
		}
		for r := range h * showZoom {
			for c := range wd * showZoom {
				at := (r/showZoom)*wd + c/showZoom
				px := color.RGBA{A: 255}
				if ch == 1 {
					v := scale(s.input[at])
					px.R, px.G, px.B = v, v, v
				} else {
					px.R, px.G, px.B = scale(s.input[at]), scale(s.input[h*wd+at]), scale(s.input[2*h*wd+at])
				}
				img.SetRGBA(x0+c, y0+r, px)
			}
		}
		text := append([]string{fmt.Sprintf("#%d  MI %.3f (%s)", s.index, s.mi, tasks[t.task].Name)}, s.labels...)
		for l, line := range text[:lines] {
			drawText(img, x0, y0+h*showZoom+(l+1)*showLineH, line)
		}
	}
	return png.Encode(w, img)
}

func drawText(img draw.Image, x, baseline int, text string) {
	if r := []rune(text); len(r) > showChars {
		text = string(r[:showChars-3]) + "..."
	}
	d := font.Drawer{Dst: img, Src: image.Black, Face: basicfont.Face7x13, Dot: fixed.P(x, baseline)}
	d.DrawString(text)
}
