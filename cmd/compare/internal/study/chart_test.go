package study

import (
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// strokes returns the end points of every line stroked on rec.
func strokes(rec *recorder.Canvas) [][]vg.Point {
	var out [][]vg.Point
	for _, a := range rec.Actions {
		if s, ok := a.(*recorder.Stroke); ok {
			var pts []vg.Point
			for _, comp := range s.Path {
				if comp.Type != vg.MoveComp && comp.Type != vg.LineComp {
					continue
				}
				pts = append(pts, comp.Pos)
			}
			out = append(out, pts)
		}
	}
	return out
}

// TestSDWhiskers draws the whiskers on a 100×100 canvas whose axes map
// x in [-0.5, 1.5] and y in [0, 1] linearly onto it, so category 0 sits at
// x = 25 and y = v at 100·v: the expected points are that map by hand.
// It also checks that a whisker stands on the middle of the bar drawn with
// the same offset, which is what the type exists for.
func TestSDWhiskers(t *testing.T) {
	p := plot.New()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -0.5, 1.5, 0, 1
	offset := vg.Length(5)
	w := newSDWhiskers([]stat{{Mean: 0.5, SD: 0.1, N: 3}, {Mean: 0.8, SD: 0.2, N: 1}}, offset)
	w.Cap = 4

	rec := &recorder.Canvas{}
	w.Plot(draw.NewCanvas(rec, 100, 100), p)
	got := strokes(rec)
	// The one-seed category draws nothing: its sd is no spread.
	want := [][]vg.Point{
		{{X: 30, Y: 40}, {X: 30, Y: 60}}, // the whisker, mean ± sd
		{{X: 28, Y: 40}, {X: 32, Y: 40}}, // its caps
		{{X: 28, Y: 60}, {X: 32, Y: 60}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines stroked, want %d: %v", len(got), len(want), got)
	}
	const tol = 1e-9 // points; the map is exact up to rounding
	for i := range want {
		for j := range want[i] {
			if d := math.Hypot(float64(got[i][j].X-want[i][j].X), float64(got[i][j].Y-want[i][j].Y)); d > tol {
				t.Errorf("line %d point %d at %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}

	bars, err := plotter.NewBarChart(plotter.Values{0.5, 0.8}, 10)
	if err != nil {
		t.Fatal(err)
	}
	bars.Offset = offset
	rec = &recorder.Canvas{}
	bars.Plot(draw.NewCanvas(rec, 100, 100), p)
	filled := false
	for _, a := range rec.Actions {
		f, ok := a.(*recorder.Fill)
		if !ok {
			continue
		}
		filled = true
		lo, hi := vg.Length(math.Inf(1)), vg.Length(math.Inf(-1))
		for _, comp := range f.Path {
			if comp.Type != vg.MoveComp && comp.Type != vg.LineComp {
				continue // a close has no position
			}
			lo, hi = min(lo, comp.Pos.X), max(hi, comp.Pos.X)
		}
		if mid := (lo + hi) / 2; math.Abs(float64(mid-30)) > tol {
			t.Errorf("first bar's middle at x = %v, whisker at 30", mid)
		}
		break
	}
	if !filled {
		t.Error("the bar chart filled no bar")
	}
}
