package main

import (
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mtsgd/mtsgd/metrics"
)

// plotReliability draws a reliability diagram: for each of the ECE's
// confidence bins that holds examples, a bar of the bin's accuracy and a
// point at its mean confidence, over the diagonal of perfect calibration.
// Bins whose accuracy or confidence is not finite (a diverged checkpoint)
// are left out: the plotter refuses NaN.
func plotReliability(w io.Writer, c *metrics.Classification, title string) error {
	plt := plot.New()
	plt.Title.Text = title
	plt.X.Label.Text = "confidence (top-class probability)"
	plt.Y.Label.Text = "accuracy"
	plt.X.Min, plt.X.Max, plt.Y.Min, plt.Y.Max = 0, 1, 0, 1

	// The bars span the ECE's bins exactly: ((m−1)/10, m/10].
	bars := &plotter.Histogram{
		Width:     1.0 / metrics.Bins,
		FillColor: color.NRGBA{R: 31, G: 119, B: 180, A: 160},
		LineStyle: plotter.DefaultLineStyle,
	}
	var conf plotter.XYs
	for b, bin := range c.Bins {
		if bin.Count == 0 || nonFinite(bin.Accuracy) || nonFinite(bin.Confidence) {
			continue
		}
		lo, hi := float64(b)/metrics.Bins, float64(b+1)/metrics.Bins
		bars.Bins = append(bars.Bins, plotter.HistogramBin{Min: lo, Max: hi, Weight: bin.Accuracy})
		conf = append(conf, plotter.XY{X: (lo + hi) / 2, Y: bin.Confidence})
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return err
	}
	diag.Color = color.Gray{Y: 128}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	points, err := plotter.NewScatter(conf)
	if err != nil {
		return err
	}
	points.GlyphStyle.Color = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	points.GlyphStyle.Shape = draw.CircleGlyph{}
	plt.Add(bars, diag, points)
	plt.Legend.Add("accuracy per bin", bars)
	plt.Legend.Add("mean confidence per bin", points)
	plt.Legend.Add("perfect calibration", diag)
	plt.Legend.Top, plt.Legend.Left = true, true

	canvas := vgimg.PngCanvas{Canvas: vgimg.New(6*vg.Inch, 6*vg.Inch)}
	plt.Draw(draw.New(canvas))
	_, err = canvas.WriteTo(w)
	return err
}
