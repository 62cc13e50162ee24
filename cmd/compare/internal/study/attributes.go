package study

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/data/celeba"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// AttributesFile and RadarFile are what WriteAttributes writes in OUT:
// the per-attribute error and ECE tables, and the radar charts of the
// error, easy attributes left and hard ones right, as the paper's CelebA
// appendix draws them.
const (
	AttributesFile = "attributes.md"
	RadarFile      = "radar.png"
)

// paperCelebAError is the paper's per-attribute test error (%) on the
// whole of CelebA, 40 attributes (its appendix table "Average
// performance (lower is better) of each target attribute for all
// baselines"), per method in celeba.Attributes order. Its columns are
// uniform scaling (linear), single task, uncertainty weighting (uw),
// GradNorm, MGDA and MT-SGD; the paper quotes the first four from Chen et
// al.'s GradNorm and ran MGDA's code with five seeds.
var paperCelebAError = map[string][40]float64{
	"linear":   {7.11, 17.30, 20.99, 17.82, 1.25, 4.91, 20.97, 18.53, 10.22, 5.29, 4.14, 16.22, 8.42, 5.17, 4.14, 0.81, 4.00, 2.39, 8.79, 13.78, 1.61, 7.18, 4.38, 8.32, 5.01, 27.59, 3.54, 26.74, 6.14, 5.55, 3.29, 8.05, 18.21, 16.53, 11.12, 1.15, 7.91, 13.27, 3.80, 13.25},
	"single":   {7.16, 14.38, 19.25, 16.79, 1.20, 4.75, 14.24, 17.74, 8.87, 5.09, 4.02, 15.34, 7.68, 5.15, 4.13, 0.52, 3.94, 2.66, 9.01, 12.27, 1.61, 6.20, 4.14, 6.57, 5.38, 24.82, 3.40, 22.74, 5.82, 5.18, 3.79, 7.18, 17.25, 15.55, 9.76, 1.13, 7.56, 11.90, 3.29, 13.40},
	"uw":       {7.18, 16.77, 20.56, 18.45, 1.17, 4.95, 15.17, 18.84, 10.19, 5.44, 4.33, 16.64, 8.85, 5.26, 4.17, 0.62, 3.99, 2.35, 8.84, 13.86, 1.58, 7.73, 4.08, 8.80, 5.12, 26.94, 3.78, 26.21, 6.17, 5.40, 3.24, 8.40, 18.15, 16.19, 11.46, 1.08, 8.06, 13.47, 4.04, 13.78},
	"gradnorm": {6.54, 14.80, 18.97, 16.47, 1.13, 4.19, 14.07, 17.33, 8.67, 4.68, 3.77, 14.73, 7.23, 4.75, 3.73, 0.56, 3.72, 2.09, 8.00, 11.79, 1.42, 6.91, 3.88, 6.54, 4.63, 24.26, 3.22, 23.12, 5.43, 5.13, 2.94, 7.21, 15.93, 13.93, 10.17, 0.94, 7.47, 11.61, 3.57, 12.26},
	"mgda":     {6.47, 15.80, 19.21, 16.60, 1.32, 4.41, 15.32, 17.70, 9.31, 4.92, 3.90, 15.27, 7.69, 4.82, 3.74, 0.54, 3.79, 2.32, 8.29, 12.18, 1.72, 6.86, 3.99, 6.88, 4.62, 24.28, 3.37, 23.41, 5.52, 5.10, 3.26, 7.19, 16.82, 15.28, 10.57, 1.14, 7.76, 11.75, 3.63, 12.53},
	"mtsgd":    {6.03, 14.11, 18.62, 15.91, 1.09, 4.02, 13.82, 17.14, 8.22, 4.42, 3.61, 14.63, 7.42, 4.59, 3.35, 0.47, 3.34, 2.00, 7.65, 11.45, 1.26, 5.91, 3.55, 6.64, 4.25, 23.78, 3.13, 22.48, 5.28, 4.82, 2.87, 6.74, 16.32, 13.19, 10.17, 0.95, 7.15, 11.32, 3.27, 11.83},
}

// hardError is the error (%) at or above which an attribute is hard.
// The paper splits the attributes into easy and hard "as in" Sener &
// Koltun but draws the split only in its figure; here an attribute is
// hard when the mean of the paper's six methods' errors for it is at
// least 10 % (14 attributes), a rule its own table decides.
const hardError = 10

// CelebAGroups are the easy and the hard attributes, each in
// celeba.Attributes order.
func CelebAGroups() (easy, hard []string) {
	for i, a := range celeba.Attributes {
		var sum float64
		for _, errs := range paperCelebAError {
			sum += errs[i]
		}
		if sum/float64(len(paperCelebAError)) >= hardError {
			hard = append(hard, a)
		} else {
			easy = append(easy, a)
		}
	}
	return easy, hard
}

// paperError is the paper's error (%) for a method spec and attribute.
func paperError(method, task string) (float64, bool) {
	name, _, _ := strings.Cut(method, "@")
	name, _, _ = strings.Cut(name, ":")
	errs, ok := paperCelebAError[name]
	i := slices.Index(celeba.Attributes, task)
	if !ok || i < 0 {
		return 0, false
	}
	return errs[i], true
}

// WriteAttributes writes into dir AttributesFile, the test error and ECE
// (%) of each method (mean over its seeds, last epoch) per attribute,
// the paper's error beside each method's, and RadarFile, the error per
// attribute of each method with a finished run, easy attributes left and
// hard right (CelebAGroups). results are each method's per-seed
// last-epoch test lines, as WriteComparison takes them.
func WriteAttributes(dir string, methods []string, results map[string][][]experiment.MetricsLine) error {
	rows := summarise(methods, results)
	var done []string
	for _, m := range methods {
		if len(results[m]) > 0 {
			done = append(done, m)
		}
	}
	if err := writeText(filepath.Join(dir, AttributesFile), attributeTables(done, rows)); err != nil {
		return err
	}
	if len(done) == 0 {
		return nil
	}
	path := filepath.Join(dir, RadarFile)
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return writeRadars(w, done, rows) }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// attributeTables is the error table, then the ECE table: a row per
// attribute, a column per method (and for the error the paper's figure
// after each method that has one), then the mean over the attributes.
func attributeTables(methods []string, rows []row) string {
	byKey := map[[2]string]row{}
	var tasks []string
	for _, r := range rows {
		if !slices.Contains(tasks, r.Task) {
			tasks = append(tasks, r.Task)
		}
		byKey[[2]string{r.Method, r.Task}] = r
	}
	easy, _ := CelebAGroups()
	var b strings.Builder
	for _, table := range []struct {
		title string
		value func(row) float64
		paper bool
	}{
		{"Test error (%) per attribute, last epoch, mean over the seeds; the paper's appendix table beside each method it reports", func(r row) float64 { return 100 * (1 - r.Accuracy.Mean) }, true},
		{"Test ECE (%) per attribute, last epoch, mean over the seeds (the paper reports none for these runs)", func(r row) float64 { return 100 * r.ECE.Mean }, false},
	} {
		fmt.Fprintf(&b, "## %s\n\n| attribute | group |", table.title)
		cols := 0
		for _, m := range methods {
			fmt.Fprintf(&b, " %s (%d) |", m, byKey[[2]string{m, tasks[0]}].Seeds)
			cols++
			if _, ok := paperError(m, tasks[0]); table.paper && ok {
				b.WriteString(" paper |")
				cols++
			}
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", cols) + "\n")
		sums := make([]float64, cols)
		for _, task := range tasks {
			group := "hard"
			if slices.Contains(easy, task) {
				group = "easy"
			}
			fmt.Fprintf(&b, "| %s | %s |", task, group)
			c := 0
			for _, m := range methods {
				v := table.value(byKey[[2]string{m, task}])
				fmt.Fprintf(&b, " %.2f |", v)
				sums[c] += v / float64(len(tasks))
				c++
				if p, ok := paperError(m, task); table.paper && ok {
					fmt.Fprintf(&b, " %.2f |", p)
					sums[c] += p / float64(len(tasks))
					c++
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("| mean | |")
		for _, s := range sums {
			fmt.Fprintf(&b, " %.2f |", s)
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// radarColors tell the methods apart in the radar charts.
var radarColors = []color.NRGBA{
	{R: 31, G: 119, B: 180, A: 255}, {R: 255, G: 127, B: 14, A: 255}, {R: 44, G: 160, B: 44, A: 255},
	{R: 214, G: 39, B: 40, A: 255}, {R: 148, G: 103, B: 189, A: 255}, {R: 140, G: 86, B: 75, A: 255},
	{R: 227, G: 119, B: 194, A: 255}, {R: 127, G: 127, B: 127, A: 255},
}

// writeRadars draws the two radar charts side by side: per group, a
// spoke per attribute the runs have, each method's error (%) a closed
// line over the spokes, rings at quarters of the group's largest error.
func writeRadars(w io.Writer, methods []string, rows []row) error {
	errs := map[[2]string]float64{}
	for _, r := range rows {
		errs[[2]string{r.Method, r.Task}] = 100 * (1 - r.Accuracy.Mean)
	}
	easy, hard := CelebAGroups()
	var panels []*plot.Plot
	for _, g := range []struct {
		name  string
		tasks []string
	}{{"easy", easy}, {"hard", hard}} {
		var tasks []string
		for _, t := range g.tasks {
			if _, ok := errs[[2]string{methods[0], t}]; ok {
				tasks = append(tasks, t)
			}
		}
		p, err := radar("CelebA "+g.name+" attributes: test error (%)", methods, tasks, errs)
		if err != nil {
			return err
		}
		panels = append(panels, p)
	}
	return curves.Grid(w, [][]*plot.Plot{panels}, 8*vg.Inch, 8*vg.Inch)
}

// radar is one radar chart of errs over tasks, one line per method.
func radar(title string, methods, tasks []string, errs map[[2]string]float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.HideAxes()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -1.5, 1.5, -1.3, 1.3
	if len(tasks) == 0 {
		return p, nil
	}
	top := 0.0
	for _, m := range methods {
		for _, t := range tasks {
			top = max(top, errs[[2]string{m, t}])
		}
	}
	if top == 0 {
		top = 1
	}
	spoke := func(i int, r float64) (float64, float64) {
		a := math.Pi/2 - 2*math.Pi*float64(i)/float64(len(tasks))
		return r * math.Cos(a), r * math.Sin(a)
	}
	var labels plotter.XYLabels
	for q := 1; q <= 4; q++ {
		ring := make(plotter.XYs, len(tasks)+1)
		for i := range ring {
			ring[i].X, ring[i].Y = spoke(i%len(tasks), float64(q)/4)
		}
		l, err := plotter.NewLine(ring)
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 210}
		p.Add(l)
		labels.XYs = append(labels.XYs, plotter.XY{X: 0.02, Y: float64(q) / 4})
		labels.Labels = append(labels.Labels, fmt.Sprintf("%.1f", top*float64(q)/4))
	}
	for i, t := range tasks {
		x, y := spoke(i, 1.08)
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: y})
		labels.Labels = append(labels.Labels, t)
	}
	for k, m := range methods {
		line := make(plotter.XYs, len(tasks)+1)
		for i := range line {
			t := tasks[i%len(tasks)]
			line[i].X, line[i].Y = spoke(i%len(tasks), errs[[2]string{m, t}]/top)
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = radarColors[k%len(radarColors)], vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(m, l)
	}
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign, lab.TextStyle[i].YAlign = -0.5, -0.5
	}
	p.Add(lab)
	p.Legend.Top = true
	return p, nil
}
