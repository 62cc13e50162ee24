// Package imagegrid draws examples as a PNG grid: each image enlarged,
// with lines of text under it. train -preview shows training examples
// with their labels this way, predict -show the examples the particles
// disagree on most.
//
// The text is set in Go Mono, whose glyphs cover Latin-1 and common
// symbols ("±", "…"), where the 7×13 bitmap font of x/image has ASCII
// only.
package imagegrid

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Layout of the grid.
const (
	Cols  = 4  // cells per row
	Zoom  = 4  // screen pixels per image pixel
	Pad   = 8  // space around each cell
	LineH = 14 // height of a line of text
	Chars = 26 // widest line, in characters; longer lines end in "..."
	charW = 7  // width of a character of the face
)

// Cell is one image and the lines of text drawn under it.
type Cell struct {
	Pixels []float32 // C×H×W, values in [0, 1]
	Lines  []string
}

// Write draws cells, images of shape C×H×W (C 1 for grey or 3 for RGB),
// in rows of Cols, each with room for lines lines of text, as a PNG.
func Write(w io.Writer, shape []int, cells []Cell, lines int) error {
	if len(shape) != 3 || (shape[0] != 1 && shape[0] != 3) {
		return fmt.Errorf("inputs of shape %v are not images of 1 or 3 channels", shape)
	}
	ch, h, wd := shape[0], shape[1], shape[2]
	cellW := max(wd*Zoom, Chars*charW) + 2*Pad
	cellH := h*Zoom + lines*LineH + 2*Pad
	rows := max(1, (len(cells)+Cols-1)/Cols)
	img := image.NewRGBA(image.Rect(0, 0, Cols*cellW, rows*cellH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for k, c := range cells {
		if len(c.Pixels) != ch*h*wd {
			return fmt.Errorf("cell %d has %d values, want %d for shape %v", k, len(c.Pixels), ch*h*wd, shape)
		}
		x0, y0 := (k%Cols)*cellW+Pad, (k/Cols)*cellH+Pad
		for r := range h * Zoom {
			for col := range wd * Zoom {
				at := (r/Zoom)*wd + col/Zoom
				px := color.RGBA{A: 255}
				if ch == 1 {
					v := toByte(c.Pixels[at])
					px.R, px.G, px.B = v, v, v
				} else {
					px.R, px.G, px.B = toByte(c.Pixels[at]), toByte(c.Pixels[h*wd+at]), toByte(c.Pixels[2*h*wd+at])
				}
				img.SetRGBA(x0+col, y0+r, px)
			}
		}
		for l, line := range c.Lines[:min(lines, len(c.Lines))] {
			DrawText(img, x0, y0+h*Zoom+(l+1)*LineH, line)
		}
	}
	return png.Encode(w, img)
}

// toByte maps [0, 1] to 0..255, clamping.
func toByte(v float32) uint8 {
	return uint8(math.Round(float64(max(0, min(1, v))) * 255))
}

var face = sync.OnceValues(func() (font.Face, error) {
	f, err := opentype.Parse(gomono.TTF)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: 11, DPI: 72, Hinting: font.HintingFull})
})

// DrawText writes text in black with its baseline at (x, baseline),
// cut to Chars characters.
func DrawText(img draw.Image, x, baseline int, text string) {
	if r := []rune(text); len(r) > Chars {
		text = string(r[:Chars-3]) + "..."
	}
	f, err := face()
	if err != nil {
		panic(err) // the embedded font is known good
	}
	d := font.Drawer{Dst: img, Src: image.Black, Face: f, Dot: fixed.P(x, baseline)}
	d.DrawString(text)
}
