package study

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/mtsgd/mtsgd/cmd/internal/curves"
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

// writeOODChart draws, per task, the AUROC of each method's predictive
// entropy and mutual information at its last epoch (mean over the seeds,
// error bars one sd): how well its uncertainty tells the other data set's
// inputs apart. rows are studyRows at the last epoch.
func writeOODChart(w io.Writer, dataset, ood string, methods []string, rows []studyRow) error {
	entropy, mi := metricIndex("AUROC entropy"), metricIndex("AUROC MI")
	var tasks, shown []string // shown: the methods with a finished run
	byKey := map[[2]string]studyRow{}
	for _, r := range rows {
		if !slices.Contains(tasks, r.Task) {
			tasks = append(tasks, r.Task)
		}
		byKey[[2]string{r.Method, r.Task}] = r
	}
	for _, m := range methods {
		if _, ok := byKey[[2]string{m, tasks[0]}]; ok {
			shown = append(shown, m)
		}
	}
	methods = shown
	var panels [][]*plot.Plot
	row := []*plot.Plot{}
	for _, task := range tasks {
		hStats, mStats := make([]stat, len(methods)), make([]stat, len(methods)) // by method
		h, m := make(plotter.Values, len(methods)), make(plotter.Values, len(methods))
		for i, method := range methods {
			r, ok := byKey[[2]string{method, task}]
			if ok && r.Vals[entropy].N > 0 {
				hStats[i], mStats[i] = r.Vals[entropy], r.Vals[mi]
				h[i], m[i] = hStats[i].Mean, mStats[i].Mean
			}
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s %s: AUROC against %s", dataset, task, ood)
		p.Y.Label.Text = "AUROC"
		width := vg.Points(10)
		a, err := plotter.NewBarChart(h, width)
		if err != nil {
			return err
		}
		b, err := plotter.NewBarChart(m, width)
		if err != nil {
			return err
		}
		a.Color, a.Offset = oursColor, -width/2
		b.Color, b.Offset = paperColor, width/2
		p.Add(a, b, newSDWhiskers(hStats, a.Offset), newSDWhiskers(mStats, b.Offset))
		p.Legend.Add("predictive entropy", a)
		p.Legend.Add("mutual information", b)
		p.Legend.Top, p.Legend.Left = true, true
		p.NominalX(methods...)
		p.X.Tick.Label.Rotation = 0.5
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -1, -0.5
		p.Y.Min, p.Y.Max = 0, 1.15 // room for the legend above the bars
		row = append(row, p)
	}
	panels = append(panels, row)
	return curves.Grid(w, panels, 7*vg.Inch, 5*vg.Inch)
}

// sdWhiskers draws ± one sd about the mean of each category of a bar
// chart whose stat has two or more seeds, at the bars' offset: plotter's
// YErrorBars place an error bar in data coordinates only, and grouped
// bars sit beside their category by an offset in canvas units.
type sdWhiskers struct {
	Stats  []stat // by category, the position NominalX gives it
	Offset vg.Length
	Style  draw.LineStyle
	Cap    vg.Length
}

func newSDWhiskers(stats []stat, offset vg.Length) *sdWhiskers {
	return &sdWhiskers{Stats: stats, Offset: offset, Style: plotter.DefaultLineStyle, Cap: vg.Points(6)}
}

// Plot implements plot.Plotter.
func (w *sdWhiskers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, s := range w.Stats {
		if s.N < 2 {
			continue
		}
		x := trX(float64(i)) + w.Offset
		low, high := trY(s.Mean-s.SD), trY(s.Mean+s.SD)
		c.StrokeLine2(w.Style, x, low, x, high)
		for _, y := range []vg.Length{low, high} {
			c.StrokeLine2(w.Style, x-w.Cap/2, y, x+w.Cap/2, y)
		}
	}
}
