package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/mtsgd/mtsgd/data"
)

// Layout of the preview grid.
const (
	previewCols   = 4
	previewZoom   = 4  // screen pixels per image pixel
	previewPad    = 8  // space around each cell
	previewLineH  = 14 // height of a line of basicfont.Face7x13 text
	previewChars  = 26 // widest label line, in characters
	previewMaxTsk = 4  // task lines per cell; more are summarised in one line
)

// writePreview draws the first n examples of one shuffled epoch of d in a
// grid, with each task's label printed under each image, as a PNG. The
// input must be an image: [1 H W] (grey) or [3 H W] (RGB), values in [0,1].
func writePreview(w io.Writer, d data.Dataset, n int, seed uint64) error {
	shape := d.InputShape()
	if len(shape) != 3 || (shape[0] != 1 && shape[0] != 3) {
		return fmt.Errorf("%s: inputs of shape %v are not images", d.Name(), shape)
	}
	ch, h, wd := shape[0], shape[1], shape[2]
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
	cellW := max(wd*previewZoom, previewChars*7) + 2*previewPad
	cellH := h*previewZoom + lines*previewLineH + 2*previewPad
	rows := (b.Size() + previewCols - 1) / previewCols
	img := image.NewRGBA(image.Rect(0, 0, previewCols*cellW, rows*cellH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)

	in := data.InputSize(d)
	for k := range b.Size() {
		x0, y0 := (k%previewCols)*cellW+previewPad, (k/previewCols)*cellH+previewPad
		pix := b.Inputs[k*in : (k+1)*in]
		for r := range h * previewZoom {
			for c := range wd * previewZoom {
				at := (r/previewZoom)*wd + c/previewZoom
				var px color.RGBA
				if ch == 1 {
					v := toByte(pix[at])
					px = color.RGBA{v, v, v, 255}
				} else {
					px = color.RGBA{toByte(pix[at]), toByte(pix[h*wd+at]), toByte(pix[2*h*wd+at]), 255}
				}
				img.SetRGBA(x0+c, y0+r, px)
			}
		}
		for j := range lines {
			text := fmt.Sprintf("%s: %s", tasks[j].Name, targetText(tasks[j], b.Targets[j][k]))
			if j == lines-1 && lines < len(tasks) {
				text = fmt.Sprintf("... %d more tasks", len(tasks)-lines+1)
			}
			drawText(img, x0, y0+h*previewZoom+(j+1)*previewLineH, text)
		}
	}
	return png.Encode(w, img)
}

func toByte(v float32) uint8 {
	return uint8(math.Round(float64(max(0, min(1, v))) * 255))
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

func drawText(img draw.Image, x, baseline int, text string) {
	if r := []rune(text); len(r) > previewChars {
		text = string(r[:previewChars-3]) + "..."
	}
	d := font.Drawer{
		Dst:  img,
		Src:  image.Black,
		Face: basicfont.Face7x13,
		Dot:  fixed.P(x, baseline),
	}
	d.DrawString(text)
}
