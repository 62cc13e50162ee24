package main

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mtsgd/mtsgd/particles/toy"
)

// plotParticles draws the final particles as a PNG: for a problem on the
// plane (mog3) over the contours of its densities, for one of two
// objectives (zdt3) in objective space over its Pareto front.
func plotParticles(w io.Writer, p toy.Problem, theta [][]float64, title string) error {
	plt := plot.New()
	plt.Title.Text = title
	var err error
	switch {
	case p.Dim == 2 && p.Extent > 0:
		err = drawDensities(plt, p, theta)
	case p.Objectives != nil && p.Targets == 2:
		err = drawObjectives(plt, p, theta)
	default:
		err = fmt.Errorf("no plot for problem %q: it is not on the plane and has not two objectives", p.Name)
	}
	if err != nil {
		return err
	}
	plt.Legend.Top = true
	c := vgimg.PngCanvas{Canvas: vgimg.New(7*vg.Inch, 6*vg.Inch)}
	plt.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}

var targetColors = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255},
}

func drawDensities(plt *plot.Plot, p toy.Problem, theta [][]float64) error {
	lim := p.Extent
	plt.X.Label.Text, plt.Y.Label.Text = "θ₀", "θ₁"
	plt.X.Min, plt.X.Max, plt.Y.Min, plt.Y.Max = -lim, lim, -lim, lim
	for k := range p.Targets {
		c := targetColors[k%len(targetColors)]
		g := newDensityGrid(func(x, y float64) float64 {
			return math.Exp(p.LogDensity(k, []float64{x, y}))
		}, -lim, lim, 141)
		top := g.max()
		plt.Add(plotter.NewContour(g, []float64{0.05 * top, 0.25 * top, 0.6 * top}, solid{c}))
		// A contour has no legend thumbnail; a line of its colour stands in.
		plt.Legend.Add(fmt.Sprintf("target %d", k+1), &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1)}})
	}
	s, err := plotter.NewScatter(positions(theta, func(th []float64) (float64, float64) { return th[0], th[1] }))
	if err != nil {
		return err
	}
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	s.GlyphStyle.Radius = vg.Points(2.5)
	plt.Add(s)
	plt.Legend.Add("particles", s)
	return nil
}

func drawObjectives(plt *plot.Plot, p toy.Problem, theta [][]float64) error {
	plt.X.Label.Text, plt.Y.Label.Text = "f₁", "f₂"
	var segments [][2]float64
	if p.Front != nil {
		segments = p.Front.Segments
	}
	for i, seg := range segments {
		var pts plotter.XYs
		for f := seg[0]; f <= seg[1]; f += (seg[1] - seg[0]) / 50 {
			pts = append(pts, plotter.XY{X: f, Y: p.Front.F2(f)})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color, l.Width = color.RGBA{R: 214, G: 39, B: 40, A: 255}, vg.Points(2)
		plt.Add(l)
		if i == 0 {
			plt.Legend.Add("Pareto front", l)
		}
	}
	s, err := plotter.NewScatter(positions(theta, func(th []float64) (float64, float64) {
		f := p.Objectives(th)
		return f[0], f[1]
	}))
	if err != nil {
		return err
	}
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	s.GlyphStyle.Radius = vg.Points(2.5)
	s.GlyphStyle.Color = targetColors[0]
	plt.Add(s)
	plt.Legend.Add("particles", s)
	return nil
}

func positions(theta [][]float64, xy func([]float64) (float64, float64)) plotter.XYs {
	pts := make(plotter.XYs, len(theta))
	for i, th := range theta {
		pts[i].X, pts[i].Y = xy(th)
	}
	return pts
}

// densityGrid samples f on an n×n grid over [lo, hi]²; it implements
// plotter.GridXYZ.
type densityGrid struct {
	lo, step float64
	n        int
	z        []float64
}

func newDensityGrid(f func(x, y float64) float64, lo, hi float64, n int) *densityGrid {
	g := &densityGrid{lo: lo, step: (hi - lo) / float64(n-1), n: n, z: make([]float64, n*n)}
	for c := range n {
		for r := range n {
			g.z[c*n+r] = f(g.X(c), g.Y(r))
		}
	}
	return g
}

func (g *densityGrid) Dims() (c, r int)   { return g.n, g.n }
func (g *densityGrid) Z(c, r int) float64 { return g.z[c*g.n+r] }
func (g *densityGrid) X(c int) float64    { return g.lo + float64(c)*g.step }
func (g *densityGrid) Y(r int) float64    { return g.lo + float64(r)*g.step }

func (g *densityGrid) max() float64 {
	m := 0.0
	for _, v := range g.z {
		m = math.Max(m, v)
	}
	return m
}

// solid is a palette of one colour, so each target's contours share it.
type solid struct{ c color.Color }

func (s solid) Colors() []color.Color { return []color.Color{s.c, s.c} }
