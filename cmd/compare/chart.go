package main

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/mtsgd/mtsgd/internal/curves"
)

var (
	oursColor  = color.NRGBA{R: 31, G: 119, B: 180, A: 255}
	paperColor = color.NRGBA{R: 255, G: 127, B: 14, A: 255}
)

// writeChart draws the classification rows as a PNG: one column of panels
// per task, accuracy above and ECE (%) below, a group of two bars per
// method: ours and, where the paper gives the figure, the paper's.
func writeChart(w io.Writer, dataset string, methods []string, rows []row) error {
	var tasks []string
	byKey := map[[2]string]row{}
	for _, r := range rows {
		if r.Regression {
			return fmt.Errorf("chart: %s is a regression task", r.Task)
		}
		if _, seen := byKey[[2]string{methods[0], r.Task}]; !seen && r.Method == methods[0] {
			tasks = append(tasks, r.Task)
		}
		byKey[[2]string{r.Method, r.Task}] = r
	}
	panels := make([][]*plot.Plot, 2)
	for m, metric := range []string{"accuracy", "ECE (%)"} {
		for _, task := range tasks {
			ours, theirs := make(plotter.Values, len(methods)), make(plotter.Values, len(methods))
			for i, method := range methods {
				r := byKey[[2]string{method, task}]
				f, ok := paper(dataset, method, task)
				if !ok {
					f = paperFigure{ECE: math.NaN(), Accuracy: math.NaN()}
				}
				if m == 0 {
					ours[i], theirs[i] = r.Accuracy.Mean, f.Accuracy
				} else {
					ours[i], theirs[i] = 100*r.ECE.Mean, f.ECE
				}
				if math.IsNaN(theirs[i]) {
					theirs[i] = 0 // no bar
				}
			}
			p := plot.New()
			p.Title.Text = dataset + " " + task + ": " + metric
			p.Y.Label.Text = metric
			width := vg.Points(12)
			a, err := plotter.NewBarChart(ours, width)
			if err != nil {
				return err
			}
			b, err := plotter.NewBarChart(theirs, width)
			if err != nil {
				return err
			}
			a.Color, a.Offset = oursColor, -width/2
			b.Color, b.Offset = paperColor, width/2
			p.Add(a, b)
			p.Legend.Add("this project", a)
			p.Legend.Add("paper", b)
			p.Legend.Top = true
			p.NominalX(methods...)
			if m == 0 {
				p.Y.Min, p.Y.Max = 0, 1
			}
			panels[m] = append(panels[m], p)
		}
	}
	return curves.Grid(w, panels, 6*vg.Inch, 4*vg.Inch)
}
