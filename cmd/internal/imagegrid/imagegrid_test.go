package imagegrid

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"golang.org/x/image/font"
)

// "±" and "…" have glyphs, and a glyph drawn darkens pixels; the widest
// line fits the width the layout gives it.
func TestFontDrawsSymbols(t *testing.T) {
	f, err := face()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range "±…é0Mg" {
		if _, ok := f.GlyphAdvance(r); !ok {
			t.Errorf("no glyph for %q", r)
		}
		img := image.NewRGBA(image.Rect(0, 0, 20, 20))
		DrawText(img, 2, 15, string(r))
		inked := 0
		for i := 3; i < len(img.Pix); i += 4 {
			if img.Pix[i] > 0 {
				inked++
			}
		}
		if inked == 0 {
			t.Errorf("%q drew nothing", r)
		}
	}
	if w := font.MeasureString(f, strings.Repeat("M", Chars)).Ceil(); w > Chars*charW {
		t.Errorf("%d characters are %d pixels wide, more than the %d the cell gives them", Chars, w, Chars*charW)
	}
}

// A grid of 5 grey cells is 2 rows of 4; each image is enlarged Zoom
// times at its cell's corner, its values mapped to 0..255 (clamped).
func TestWrite(t *testing.T) {
	shape := []int{1, 2, 3}
	var cells []Cell
	for k := range 5 {
		cells = append(cells, Cell{Pixels: []float32{0, 0.5, 1, -1, 2, float32(k) / 4}, Lines: []string{"a: 1", "b ± 0.2", "not drawn"}})
	}
	var b bytes.Buffer
	if err := Write(&b, shape, cells, 2); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	cellW, cellH := Chars*charW+2*Pad, 2*Zoom+2*LineH+2*Pad
	if got := img.Bounds(); got.Dx() != Cols*cellW || got.Dy() != 2*cellH {
		t.Fatalf("bounds %v, want %d×%d", got, Cols*cellW, 2*cellH)
	}
	grey := func(x, y int) uint8 { r, _, _, _ := img.At(x, y).RGBA(); return uint8(r >> 8) }
	// Cell 4 (second row, first column): pixel (row 1, col 2) is k/4 = 1.
	want := []uint8{0, 128, 255, 0, 255, 255}
	for i, w := range want {
		x, y := Pad+(i%3)*Zoom+Zoom/2, cellH+Pad+(i/3)*Zoom+Zoom/2
		if g := grey(x, y); g != w {
			t.Errorf("cell 4 value %d: grey %d, want %d", i, g, w)
		}
	}
	if err := Write(&b, []int{2, 2, 2}, nil, 1); err == nil {
		t.Error("2 channels accepted")
	}
	if err := Write(&b, shape, []Cell{{Pixels: []float32{1}}}, 1); err == nil {
		t.Error("a cell of the wrong size accepted")
	}
}
