// Package curves draws a run's learning curves, and a comparison's
// methods against each other over the epochs, as PNG charts.
package curves

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/metrics"
)

// FileName is the name of a run's chart in its directory.
const FileName = "curves.png"

var (
	splitColors = map[string]color.NRGBA{
		"test":  {R: 31, G: 119, B: 180, A: 255},
		"valid": {R: 255, G: 127, B: 14, A: 255},
	}
	palette = []color.NRGBA{
		{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255}, {R: 44, G: 160, B: 44, A: 255},
		{R: 214, G: 39, B: 40, A: 255}, {R: 148, G: 103, B: 189, A: 255}, {R: 140, G: 86, B: 75, A: 255},
		{R: 227, G: 119, B: 194, A: 255}, {R: 127, G: 127, B: 127, A: 255}, {R: 188, G: 189, B: 34, A: 255},
		{R: 23, G: 190, B: 207, A: 255},
	}
)

// metric is one panel's figure of a score.
type metric struct {
	Name  string
	Value func(metrics.Score) float64
	// Log draws the figure on a log scale (methodPanels): for figures
	// that fall by orders of magnitude over a run, whose late
	// differences a linear scale would flatten.
	Log bool
}

// metricsOf are the panels of a task: accuracy and ECE (%) for
// classification, MSE for regression.
func metricsOf(s metrics.Score) []metric {
	if s.Regression != nil {
		return []metric{{Name: "MSE", Value: func(s metrics.Score) float64 { return s.MSE }}}
	}
	return []metric{
		{Name: "accuracy", Value: func(s metrics.Score) float64 { return s.Accuracy }},
		{Name: "ECE (%)", Value: func(s metrics.Score) float64 { return 100 * s.ECE }},
	}
}

// tasks are the tasks of history in their order.
func tasks(history []experiment.MetricsLine) []string {
	var ts []string
	for _, l := range history {
		if !slices.Contains(ts, l.Task) {
			ts = append(ts, l.Task)
		}
	}
	return ts
}

// WriteRun writes a run's chart to path, atomically.
func WriteRun(path string, history []experiment.MetricsLine) error {
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return Run(w, history) }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// MaxRunRows is the most tasks a run's chart gives a row each; a run of
// more classification tasks (CelebA's 40) gets one row of their mean,
// since a row per task would make an image of some twenty million pixels
// at every epoch. metrics.jsonl keeps every task's figures.
const MaxRunRows = 8

// Run draws a run's learning curves: a row of panels per task, the
// training loss per epoch (one thin line per particle, where the history
// has them, and a bold one for their mean), then each score per epoch on
// the validation and test splits, one thin line per particle and a bold
// one for the ensemble. Beyond MaxRunRows classification tasks, one row
// of the mean over the tasks.
func Run(w io.Writer, history []experiment.MetricsLine) error {
	ts := tasks(history)
	if len(ts) == 0 {
		return fmt.Errorf("curves: no epochs")
	}
	if len(ts) > MaxRunRows {
		if mean, ok := meanOverTasks(history, len(ts)); ok {
			history, ts = mean, tasks(mean)
		}
	}
	var rows [][]*plot.Plot
	for _, task := range ts {
		var lines []experiment.MetricsLine
		for _, l := range history {
			if l.Task == task {
				lines = append(lines, l)
			}
		}
		loss, err := lossPlot(task, lines)
		if err != nil {
			return err
		}
		row := []*plot.Plot{loss}
		for _, m := range metricsOf(lines[0].Score) {
			p, err := metricPlot(task, m, lines)
			if err != nil {
				return err
			}
			row = append(row, p)
		}
		rows = append(rows, row)
	}
	return Grid(w, rows, 5*vg.Inch, 3.5*vg.Inch)
}

// meanOverTasks is the history of a run of n classification tasks as one
// task: per epoch and split, the mean over the tasks of the training loss
// and of the accuracy and ECE, the ensemble's and each particle's. Not ok
// where a task is a regression, whose scores do not average with
// classification's.
func meanOverTasks(history []experiment.MetricsLine, n int) ([]experiment.MetricsLine, bool) {
	type key struct {
		epoch int
		split string
	}
	var order []key
	sums := map[key]*experiment.MetricsLine{}
	add := func(dst *metrics.Classification, src metrics.Score) {
		dst.Accuracy += src.Accuracy / float64(n)
		dst.ECE += src.ECE / float64(n)
	}
	for _, l := range history {
		if l.Classification == nil {
			return nil, false
		}
		k := key{l.Epoch, l.Split}
		sum, ok := sums[k]
		if !ok {
			sum = &experiment.MetricsLine{Epoch: l.Epoch, Split: l.Split, Task: fmt.Sprintf("mean of %d tasks", n),
				Score: metrics.Score{Classification: &metrics.Classification{}}}
			sums[k] = sum
			order = append(order, k)
		}
		sum.Loss += l.Loss / float64(n)
		add(sum.Classification, l.Score)
		for i, p := range l.Particles {
			for len(sum.Particles) <= i {
				sum.Particles = append(sum.Particles, metrics.Score{Classification: &metrics.Classification{}})
			}
			add(sum.Particles[i].Classification, p)
		}
		for i, v := range l.ParticleLoss {
			for len(sum.ParticleLoss) <= i {
				sum.ParticleLoss = append(sum.ParticleLoss, 0)
			}
			sum.ParticleLoss[i] += v / float64(n)
		}
	}
	mean := make([]experiment.MetricsLine, len(order))
	for i, k := range order {
		mean[i] = *sums[k]
	}
	return mean, true
}

// lossPlot is one task's training loss against epoch, from its test
// lines: each particle's, thin, and their mean.
func lossPlot(task string, lines []experiment.MetricsLine) (*plot.Plot, error) {
	loss := plot.New()
	loss.Title.Text = task + ": training loss"
	loss.X.Label.Text = "epoch"
	var mean plotter.XYs
	var parts []plotter.XYs
	for _, l := range lines {
		if l.Split != "test" {
			continue
		}
		mean = append(mean, plotter.XY{X: float64(l.Epoch), Y: l.Loss})
		for i, v := range l.ParticleLoss {
			for len(parts) <= i {
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], plotter.XY{X: float64(l.Epoch), Y: v})
		}
	}
	for i, xy := range parts {
		label := ""
		if i == 0 {
			label = "particles"
		}
		if err := addLine(loss, xy, color.NRGBA{A: 110}, 0.6, label); err != nil {
			return nil, err
		}
	}
	if err := addLine(loss, mean, color.NRGBA{A: 255}, 2, "mean over particles"); err != nil {
		return nil, err
	}
	loss.Legend.Top = true
	return loss, nil
}

// metricPlot is one task's metric m against epoch, for the validation and
// the test split in their colours: each particle's, thin, and the
// ensemble's.
func metricPlot(task string, m metric, lines []experiment.MetricsLine) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = task + ": " + m.Name
	p.X.Label.Text = "epoch"
	for _, split := range []string{"valid", "test"} {
		var ens plotter.XYs
		var parts []plotter.XYs
		for _, l := range lines {
			if l.Split != split {
				continue
			}
			ens = append(ens, plotter.XY{X: float64(l.Epoch), Y: m.Value(l.Score)})
			for i, s := range l.Particles {
				if i == len(parts) {
					parts = append(parts, nil)
				}
				parts[i] = append(parts[i], plotter.XY{X: float64(l.Epoch), Y: m.Value(s)})
			}
		}
		if len(ens) == 0 {
			continue
		}
		c := splitColors[split]
		thin := c
		thin.A = 110
		for i, xy := range parts {
			label := ""
			if i == 0 {
				label = split + " particles"
			}
			if err := addLine(p, xy, thin, 0.6, label); err != nil {
				return nil, err
			}
		}
		if err := addLine(p, ens, c, 2.2, split+" ensemble"); err != nil {
			return nil, err
		}
	}
	p.Legend.Top = true
	return p, nil
}

// addLine adds a line with points, and a legend entry unless label is "".
func addLine(p *plot.Plot, xy plotter.XYs, c color.Color, width vg.Length, label string) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, width
	p.Add(l)
	if len(xy) == 1 { // a single epoch draws no line: mark it
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return err
		}
		s.Color = c
		p.Add(s)
	}
	if label != "" {
		p.Legend.Add(label, l)
	}
	return nil
}

// Methods draws methods against each other on the test split: a column
// of panels per task, a row per score, and for each method the mean over
// its seeds' runs per epoch in a band of one sample standard deviation
// (none for a single seed). histories holds each method's per-seed
// histories.
func Methods(w io.Writer, dataset string, methods []string, histories map[string][][]experiment.MetricsLine) error {
	return methodPanels(w, dataset, methods, histories, metricsOf)
}

// Calibration is Methods with a row of panels for the test ECE (%) and
// one for the test NLL of each classification task, both on a log scale:
// how the methods' calibration moves over a long run, from the first
// epochs' tens of percent to the last epochs' differences of a tenth.
func Calibration(w io.Writer, dataset string, methods []string, histories map[string][][]experiment.MetricsLine) error {
	return methodPanels(w, dataset, methods, histories, func(s metrics.Score) []metric {
		if s.Regression != nil {
			return metricsOf(s)
		}
		return []metric{
			{Name: "ECE (%)", Value: func(s metrics.Score) float64 { return 100 * s.ECE }, Log: true},
			{Name: "NLL", Value: func(s metrics.Score) float64 { return s.NLL }, Log: true},
		}
	})
}

// methodPanels draws Methods' grid with the panels kindsOf gives.
func methodPanels(w io.Writer, dataset string, methods []string, histories map[string][][]experiment.MetricsLine,
	kindsOf func(metrics.Score) []metric) error {
	var ts []string
	var kinds []metric
	for _, m := range methods {
		for _, h := range histories[m] {
			for _, task := range tasks(h) {
				if !slices.Contains(ts, task) {
					ts = append(ts, task)
				}
			}
			if kinds == nil && len(h) > 0 {
				kinds = kindsOf(h[0].Score)
			}
		}
	}
	if len(ts) == 0 {
		return fmt.Errorf("curves: no finished runs")
	}
	rows := make([][]*plot.Plot, len(kinds))
	for k, kind := range kinds {
		for _, task := range ts {
			p, err := methodPanel(dataset, task, kind, methods, histories)
			if err != nil {
				return err
			}
			rows[k] = append(rows[k], p)
		}
	}
	// Taller panels for many methods, so that the legend (an entry a
	// method) fits in the top half of a panel, above the curves
	// (roomForLegend).
	height := max(3.5*vg.Inch, vg.Length(len(methods))*vg.Inch/2)
	return Grid(w, rows, 5*vg.Inch, height)
}

// methodPanel is methodPanels' panel of one task and figure: each
// method's mean over its seeds per epoch, in a band of one sample
// standard deviation where it has more than one seed.
func methodPanel(dataset, task string, kind metric, methods []string, histories map[string][][]experiment.MetricsLine) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = dataset + " " + task + ": test " + kind.Name
	p.X.Label.Text = "epoch"
	logScale := kind.Log
	type curve struct {
		xy plotter.XYs
		sd []float64
	}
	curves := make([]curve, len(methods))
	for i, m := range methods {
		byEpoch := map[int][]float64{}
		for _, h := range histories[m] {
			for _, l := range h {
				if l.Split == "test" && l.Task == task {
					byEpoch[l.Epoch] = append(byEpoch[l.Epoch], kind.Value(l.Score))
				}
			}
		}
		epochs := slices.Sorted(maps.Keys(byEpoch))
		for _, e := range epochs {
			mean, sd := meanSD(byEpoch[e])
			curves[i].xy = append(curves[i].xy, plotter.XY{X: float64(e), Y: mean})
			curves[i].sd = append(curves[i].sd, sd)
			if !(mean > 0) {
				logScale = false // a log scale has no place for it
			}
		}
	}
	// A panel with nothing in it has no range for a log scale.
	logScale = logScale && slices.ContainsFunc(curves, func(c curve) bool { return len(c.xy) > 0 })
	if logScale {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Label.Text = "log scale"
	}
	for i, m := range methods {
		if len(curves[i].xy) == 0 {
			continue
		}
		c := palette[i%len(palette)]
		if slices.Max(curves[i].sd) > 0 {
			band, err := sdBand(curves[i].xy, curves[i].sd, c, logScale)
			if err != nil {
				return nil, err
			}
			p.Add(band)
		}
		if err := addLine(p, curves[i].xy, c, 1.5, m); err != nil {
			return nil, err
		}
	}
	if logScale && p.Y.Min == p.Y.Max {
		// One value: gonum widens it by ±1, through zero; a factor of 2
		// either side instead.
		p.Y.Min, p.Y.Max = p.Y.Min/2, p.Y.Max*2
	}
	p.Legend.Top = true
	return p, nil
}

// sdBand is the band y ± sd around the curve xy, filled in a light shade
// of c. On a log scale its lower edge stops at a tenth of y, where y − sd
// would reach zero or below.
func sdBand(xy plotter.XYs, sd []float64, c color.NRGBA, logScale bool) (*plotter.Polygon, error) {
	var upper, lower plotter.XYs
	for j, pt := range xy {
		low := pt.Y - sd[j]
		if logScale {
			low = max(low, pt.Y/10)
		}
		upper = append(upper, plotter.XY{X: pt.X, Y: pt.Y + sd[j]})
		lower = append(plotter.XYs{{X: pt.X, Y: low}}, lower...)
	}
	band, err := plotter.NewPolygon(append(upper, lower...))
	if err != nil {
		return nil, err
	}
	band.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 60}
	band.LineStyle.Width = 0
	return band, nil
}

// meanSD is the mean and sample standard deviation of v (0 for one).
func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x / float64(len(v))
	}
	if len(v) > 1 {
		for _, x := range v {
			sd += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(sd / float64(len(v)-1))
	}
	return mean, sd
}

// Grid draws rows of panels, each width by height, aligned as one PNG;
// short rows are padded with empty panels.
func Grid(w io.Writer, rows [][]*plot.Plot, width, height vg.Length) error {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	for i := range rows {
		for len(rows[i]) < cols {
			rows[i] = append(rows[i], plot.New())
		}
	}
	img := vgimg.New(vg.Length(cols)*width, vg.Length(len(rows))*height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Inch / 4, PadY: vg.Inch / 4,
		PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(rows, tiles, dc)
	for i := range rows {
		for j, p := range rows[i] {
			roomForLegend(p, canvases[i][j])
			p.Draw(canvases[i][j])
		}
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// roomForLegend raises the top of p's y axis so that a legend at the
// top of its data area lies above every curve: curves end where they
// are best, often at the top, where the legend would hide them. A legend
// taller than half the data area is left where it is.
func roomForLegend(p *plot.Plot, c draw.Canvas) {
	if !p.Legend.Top || !(p.Y.Max > p.Y.Min) {
		return
	}
	da := p.DataCanvas(c)
	height := da.Max.Y - da.Min.Y
	legend := p.Legend.Rectangle(da)
	need := legend.Max.Y - legend.Min.Y + p.Legend.Padding + vg.Points(4)
	if legend.Max.Y <= legend.Min.Y || need > height/2 {
		return
	}
	grow := float64(height / (height - need))
	if _, log := p.Y.Scale.(plot.LogScale); log {
		p.Y.Max = p.Y.Min * math.Pow(p.Y.Max/p.Y.Min, grow)
		return
	}
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)*grow
}

// OverTime draws methods against each other on the test split over
// wall-clock time: for each method, one point per epoch at the mean over
// its seeds of the seconds spent so far (training and evaluation) and of
// the test NLL averaged over the tasks (MSE for regression), inside a
// band of one sample standard deviation of that figure over the seeds.
// It compares the methods at equal time where the table compares them at
// equal epochs.
func OverTime(w io.Writer, dataset string, methods []string, histories map[string][][]experiment.MetricsLine) error {
	p := plot.New()
	p.X.Label.Text = "seconds (training and evaluation)"
	drawn := false
	for i, m := range methods {
		secs, figs := map[int][]float64{}, map[int][]float64{} // epoch → per seed
		regression := false
		for _, h := range histories[m] {
			sum, n := map[int]float64{}, map[int]int{}
			at := map[int]float64{}
			for _, l := range h {
				if l.Split != "test" {
					continue
				}
				if l.Regression != nil {
					regression = true
					sum[l.Epoch] += l.MSE
				} else {
					sum[l.Epoch] += l.NLL
				}
				n[l.Epoch]++
				at[l.Epoch] = l.Seconds
			}
			for e := range sum {
				secs[e] = append(secs[e], at[e])
				figs[e] = append(figs[e], sum[e]/float64(n[e]))
			}
		}
		if len(figs) == 0 {
			continue
		}
		p.Y.Label.Text = "test NLL, mean over tasks"
		if regression {
			p.Y.Label.Text = "test MSE, mean over tasks"
		}
		var epochs []int
		for e := range figs {
			epochs = append(epochs, e)
		}
		slices.Sort(epochs)
		var xy plotter.XYs
		var sds []float64
		for _, e := range epochs {
			x, _ := meanSD(secs[e])
			y, sd := meanSD(figs[e])
			xy = append(xy, plotter.XY{X: x, Y: y})
			sds = append(sds, sd)
		}
		c := palette[i%len(palette)]
		band, err := sdBand(xy, sds, c, false)
		if err != nil {
			return err
		}
		p.Add(band)
		if err := addLine(p, xy, c, 1.5, m); err != nil {
			return err
		}
		drawn = true
	}
	if !drawn {
		return fmt.Errorf("curves: no finished runs")
	}
	p.Title.Text = dataset + ": test NLL against time, mean ± sd over seeds"
	p.Legend.Top = true
	return Grid(w, [][]*plot.Plot{{p}}, 7*vg.Inch, 4.5*vg.Inch)
}
