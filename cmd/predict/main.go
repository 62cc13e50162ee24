package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/progress"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/data/npz"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
	_ "github.com/mtsgd/mtsgd/internal/openblas" // OpenBLAS when built with -tags openblas
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/metrics"
)

// Options is everything a prediction depends on.
type Options struct {
	Checkpoint string
	Data       string
	Out        []string // .csv and .npz paths
	Chunk      int
	Show       string // PNG of the examples with the highest mutual information
	ShowTask   string // the task ranked for Show; "": the first classification task
	Workers    int
	Device     string
	Progress   bool
	// Temperature applies the checkpoint's temperatures to the
	// ensemble's probabilities.
	Temperature bool
	// skipped is where the rows left out for a missing input are listed,
	// for a run trained with -missing drop; "" otherwise.
	skipped string
}

// prepared is called with each output once it is written, before any is
// put in place; tests interrupt predict there.
var prepared = func(path string) {}

func main() {
	cli.Main(cli.Command[Options]{Name: "predict", Parse: parseFlags, Run: run, Explain: explain})
}

// explain words an interruption: predict writes all its outputs or none.
func explain(_ Options, err error) bool {
	if cli.Status(err) == cli.ExitInterrupted {
		log.Warn("interrupted by SIGINT or SIGTERM: nothing written")
		return true
	}
	return false
}

func parseFlags(args []string, stderr io.Writer) (Options, error) {
	o := Options{}
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: predict -ckpt DIR -data FILE.npz -out FILE.csv [-out FILE.npz] [flags]   (see `go doc ./cmd/predict`)")
		fs.PrintDefaults()
	}
	cli.Checkpoint(fs, &o.Checkpoint, "of a run on -data files")
	cli.Data(fs, &o.Data, ".npz file whose array x holds the inputs, or .csv file (required)")
	cli.Out(fs, "output file, .csv or .npz; give it twice for both (required)", func(v string) error {
		o.Out = append(o.Out, v)
		return nil
	})
	fs.IntVar(&o.Chunk, "chunk", 4096, "examples read and predicted at a time")
	fs.StringVar(&o.Show, "show", "", "write a PNG of the 16 examples with the highest mutual information (image inputs)")
	fs.StringVar(&o.ShowTask, "show-task", "", "the classification task whose mutual information -show ranks by (default: the first)")
	cli.Workers(fs, &o.Workers, "")
	cli.Device(fs, &o.Device, "")
	cli.Progress(fs, &o.Progress)
	cli.Temperature(fs, &o.Temperature, "the checkpoint's, applied to the ensemble's probabilities")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.Checkpoint == "":
		return o, errors.New("-ckpt is required")
	case o.Data == "":
		return o, errors.New("-data is required")
	case len(o.Out) == 0:
		return o, errors.New("-out is required: FILE.csv, FILE.npz, or both")
	case o.Chunk < 1:
		return o, fmt.Errorf("-chunk must be at least 1, got %d", o.Chunk)
	case o.Workers < 1:
		return o, fmt.Errorf("-workers must be at least 1, got %d", o.Workers)
	case o.ShowTask != "" && o.Show == "":
		return o, errors.New("-show-task chooses the task of -show FILE.png; give -show too")
	case o.Show != "" && filepath.Ext(o.Show) != ".png":
		return o, fmt.Errorf("-show %s: the name must end in .png", o.Show)
	}
	var kinds []string
	for _, out := range o.Out {
		ext := filepath.Ext(out)
		if ext != ".csv" && ext != ".npz" {
			return o, fmt.Errorf("-out %s: the name must end in .csv or .npz", out)
		}
		if slices.Contains(kinds, ext) {
			return o, fmt.Errorf("-out: two %s files; give one .csv and one .npz", ext)
		}
		kinds = append(kinds, ext)
	}
	return o, cuda.CheckName(o.Device)
}

func run(ctx context.Context, o Options) error {
	sysmem.CollectEarly()
	dir, c, s, err := loadFilesRun(o.Checkpoint)
	if err != nil {
		return err
	}
	if s.Files.Missing == files.MissingDrop {
		o.skipped = skippedPath(o.Out[0])
	}
	if err := checkOutputs(o, s.Files.Dir); err != nil {
		return err
	}
	in, err := files.OpenInputs(o.Data, s.Files)
	if err != nil {
		return err
	}
	defer in.Close()
	first, err := in.Next(o.Chunk)
	if err != nil {
		return err
	}
	dev, err := cuda.OpenNamed(o.Device)
	if errors.Is(err, cuda.ErrNotBuilt) {
		return cli.Usage(err)
	}
	if err != nil {
		return err
	}
	if dev != nil {
		defer dev.Close()
	}
	// The training split is only a placeholder: its shape, tasks and size
	// rebuild the networks and check the checkpoint's position.
	d := experiment.Data{Train: files.Placeholder(s.Files), Test: first}
	if s.Files.Valid > 0 {
		d.Valid = first // the checkpoint's history has validation lines
	}
	r, err := experiment.RestoreWith(c, d, experiment.Components{Device: dev}, o.Workers)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	tasks := s.Files.DataTasks()
	top, err := showFor(&o, s.Files.Shape, tasks)
	if err != nil {
		return err
	}
	temps, err := o.temperatures(ctx, dir, r, s, tasks)
	if err != nil {
		return err
	}
	log.WithFields(log.Fields{"checkpoint": dir, "epoch": r.Epoch(), "model": r.Settings.Model, "particles": len(r.Trainer.Particles),
		"inputs": o.Data, "examples": in.Len()}).Info("predicting")

	tmp, err := os.MkdirTemp(filepath.Dir(o.Out[0]), ".predict-")
	if err != nil {
		return o.outputError(err)
	}
	defer os.RemoveAll(tmp)
	w, err := newWriter(tmp, tasks, in.Len(), in.IDName(), noiseVariances(r, tasks, s.Files.Valid))
	if err != nil {
		return o.outputError(err)
	}
	defer w.close()
	w.temps = temps
	if err := predictAll(ctx, o, r, in, first, w, top); err != nil {
		return o.outputError(err)
	}
	if err := writeOutputs(ctx, o, w, top, tasks, in); err != nil {
		return o.outputError(err)
	}
	for _, out := range o.outputs() {
		log.WithField("file", out).Info("wrote")
	}
	if w.nonFinite > 0 {
		return fmt.Errorf("%d predictions are not finite (NaN or Inf): the checkpoint has diverged; the files are written", w.nonFinite)
	}
	return nil
}

// loadFilesRun loads the checkpoint -ckpt names, with its directory and
// settings. Only a run on the user's own files describes its inputs, which
// predict needs to read new ones.
func loadFilesRun(path string) (string, *checkpoints.Checkpoint, experiment.Settings, error) {
	dir := checkpoints.Locate(path)
	c, err := checkpoints.Load(dir)
	if err != nil {
		return dir, nil, experiment.Settings{}, err
	}
	s, err := experiment.ReadSettings(c)
	if err != nil {
		return dir, nil, s, fmt.Errorf("%s: %w", dir, err)
	}
	if s.Dataset != files.Name || s.Files == nil || s.Files.Input == nil {
		return dir, nil, s, cli.Usage(fmt.Errorf("%s is a run on %s; predict reads checkpoints of runs on your own files (train -data DIR); score it with eval", dir, s.Dataset))
	}
	return dir, c, s, nil
}

// showFor is what ranks the examples for -show, nil without it. The
// predictions are what was asked for: on inputs that are not images the
// picture is dropped (o.Show cleared) with a warning.
func showFor(o *Options, shape []int, tasks []data.Task) (*topMI, error) {
	if o.Show == "" {
		return nil, nil
	}
	top, err := newTopMI(shape, tasks, o.ShowTask)
	if errors.Is(err, errNotImages) {
		log.WithField("show", o.Show).Warn(err.Error() + "; writing the predictions without it")
		o.Show = ""
		return nil, nil
	}
	if err != nil {
		return nil, cli.Usage(err)
	}
	return top, nil
}

// predictAll runs the ensemble on every chunk of in, first already
// read, streaming each batch's figures to w and offering its examples to
// top (nil: no -show).
func predictAll(ctx context.Context, o Options, r *experiment.Run, in *files.Inputs, first *files.Set, w *writer, top *topMI) error {
	bar := progress.New(o.Progress, "predict", "examples", in.Len())
	done, chunkStart := 0, 0
	ids := func(set *files.Set, done, size int) []string {
		if all := set.IDs(); all != nil {
			return all[done-chunkStart : done-chunkStart+size]
		}
		return nil
	}
	for set := first; set != nil; {
		err := r.Trainer.Predict(ctx, set, func(b *data.Batch, pred [][][]float64) error {
			if err := w.batch(pred, b.Size(), ids(set, done, b.Size())); err != nil {
				return err
			}
			if top != nil {
				size := len(b.Inputs) / b.Size()
				for e := range b.Size() {
					top.offer(done+e, w.last[top.task][e].MutualInformation, b.Inputs[e*size:(e+1)*size], func() []string { return w.labels(e) })
				}
			}
			done += b.Size()
			bar.Done(done, "")
			return nil
		})
		if err != nil {
			bar.Finish()
			return err
		}
		chunkStart = done
		if set, err = in.Next(o.Chunk); err != nil {
			bar.Finish()
			return err
		}
	}
	bar.Finish()
	return nil
}

// writeOutputs writes every output to a temporary file beside it and
// puts them all in place only once all were written and no signal came
// meanwhile.
func writeOutputs(ctx context.Context, o Options, w *writer, top *topMI, tasks []data.Task, in *files.Inputs) error {
	var pending []*atomicfile.Pending
	defer func() {
		for _, p := range pending {
			p.Abort()
		}
	}()
	for _, out := range o.outputs() {
		var p *atomicfile.Pending
		var err error
		switch {
		case out == o.Show:
			p, err = atomicfile.Prepare(o.Show, 0o644, func(out io.Writer) error { return top.write(out, tasks) })
		case out == o.skipped:
			p, err = atomicfile.Prepare(o.skipped, 0o644, func(out io.Writer) error { return writeSkipped(out, in.Skipped(), in.IDName()) })
		case filepath.Ext(out) == ".csv":
			p, err = w.writeCSV(ctx, out)
		default:
			p, err = w.writeNPZ(out)
		}
		if err != nil {
			return err
		}
		pending = append(pending, p)
		prepared(out)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for _, p := range pending {
		if err := p.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// column is one output array: its name, its width per example and its
// NumPy type, streamed to a temporary file.
type column struct {
	name  string // TASK/what
	width int    // values per example (classes for probs, else 1)
	descr string // <f8 or <i8
	f     *os.File
	w     *bufio.Writer
	// names, for a label column of a task whose classes have names: the
	// CSV gives each label's name in a column TASK/class beside it.
	names []string
}

// writer streams each batch's figures to one temporary file per column,
// so that memory holds a batch, then assembles the CSV and NPZ files.
type writer struct {
	tasks     []data.Task
	cols      [][]*column // per task
	n         int         // examples expected
	rows      int         // examples written
	nonFinite int

	// The last batch's figures per task and example: a classification
	// task's disagreement, a regression task's mean and spread.
	last     [][]metrics.Disagreement
	lastMean [][][2]float64

	// Scratch: an example's mean probabilities and its particles' rows,
	// and the bytes of one value being written.
	mean []float64
	ps   [][]float64
	buf  [8]byte

	// temps are the per-task temperatures applied to the ensemble's
	// probabilities; nil for none.
	temps []float64
	// noise is each regression task's noise variance (noiseVariances),
	// NaN where it is unknown.
	noise []float64
	// ids is the examples' identifiers (the CSV id column), streamed to
	// a file as a length and the bytes; nil without an id column.
	idName string
	ids    *column
}

// noiseVariances is, per regression task, the variance the ensemble's
// spread leaves out: the validation MSE of its mean at the checkpoint's
// epoch, in the targets' units (NaN for a classification task, or
// without a validation split). The predictive standard deviation is
// sqrt(spread² + noise): the spread alone is the particles' disagreement,
// far below the error it claims to measure.
func noiseVariances(r *experiment.Run, tasks []data.Task, valid int) []float64 {
	noise := make([]float64, len(tasks))
	for j := range noise {
		noise[j] = math.NaN()
	}
	if valid < experiment.MinNoiseExamples {
		if slices.ContainsFunc(tasks, func(t data.Task) bool { return t.Kind == data.Regression }) && valid > 0 {
			log.WithField("valid_examples", valid).Warnf("the validation split has fewer than %d examples, too few to estimate the noise: each regression std is the particles' spread alone, which understates the error", experiment.MinNoiseExamples)
		}
		return noise
	}
	for _, l := range r.History() {
		if l.Epoch != r.Epoch() || l.Split != "valid" || l.Regression == nil {
			continue
		}
		if j := slices.IndexFunc(tasks, func(t data.Task) bool { return t.Name == l.Task }); j >= 0 {
			noise[j] = l.MSE
		}
	}
	for j, t := range tasks {
		if t.Kind == data.Regression && math.IsNaN(noise[j]) {
			log.WithField("task", t.Name).Warn("no validation MSE at the checkpoint's epoch: the std is the particles' spread alone, which understates the error")
		}
	}
	return noise
}

func newWriter(tmp string, tasks []data.Task, n int, idName string, noise []float64) (*writer, error) {
	w := &writer{tasks: tasks, n: n, idName: idName, noise: noise}
	if idName != "" {
		f, err := os.Create(filepath.Join(tmp, "ids"))
		if err != nil {
			return nil, err
		}
		w.ids = &column{name: idName, f: f, w: bufio.NewWriterSize(f, 1<<16)}
	}
	for j, t := range tasks {
		var cs []*column
		if t.Kind == data.Classification {
			cs = []*column{
				{name: "probs", width: t.Classes, descr: "<f8"}, {name: "label", width: 1, descr: "<i8", names: t.ClassNames},
				{name: "confidence", width: 1, descr: "<f8"}, {name: "predictive_entropy", width: 1, descr: "<f8"},
				{name: "expected_entropy", width: 1, descr: "<f8"}, {name: "mutual_information", width: 1, descr: "<f8"},
			}
		} else {
			cs = []*column{{name: "mean", width: 1, descr: "<f8"}, {name: "std", width: 1, descr: "<f8"}, {name: "spread", width: 1, descr: "<f8"}}
		}
		for k, c := range cs {
			c.name = t.Name + "/" + c.name
			f, err := os.Create(filepath.Join(tmp, fmt.Sprintf("%d-%d", j, k)))
			if err != nil {
				w.close()
				return nil, err
			}
			c.f, c.w = f, bufio.NewWriterSize(f, 1<<16)
		}
		w.cols = append(w.cols, cs)
	}
	return w, nil
}

func (w *writer) close() {
	if w.ids != nil {
		w.ids.f.Close()
	}
	for _, cs := range w.cols {
		for _, c := range cs {
			if c.f != nil {
				c.f.Close()
			}
		}
	}
}

// batch writes the figures of one batch of size examples, whose
// identifiers are ids (nil without an id column).
func (w *writer) batch(pred [][][]float64, size int, ids []string) error {
	if w.ids != nil {
		if err := w.writeIDs(ids, size); err != nil {
			return err
		}
	}
	if w.last == nil {
		w.last, w.lastMean = make([][]metrics.Disagreement, len(w.tasks)), make([][][2]float64, len(w.tasks))
	}
	for j, t := range w.tasks {
		w.last[j], w.lastMean[j] = w.last[j][:0], w.lastMean[j][:0]
		var err error
		if t.Kind == data.Regression {
			err = w.regression(j, pred[j], size)
		} else {
			err = w.classification(j, pred[j], size)
		}
		if err != nil {
			return err
		}
	}
	w.rows += size
	return nil
}

// writeIDs writes a batch's identifiers, each its length (uint32) and
// bytes; without the column in the inputs (ids nil) they are empty.
func (w *writer) writeIDs(ids []string, size int) error {
	if ids == nil {
		ids = make([]string, size)
	}
	if len(ids) != size {
		return fmt.Errorf("predict: %d identifiers for %d examples", len(ids), size)
	}
	for _, id := range ids {
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(id)))
		w.ids.w.Write(n[:])
		if _, err := w.ids.w.WriteString(id); err != nil {
			return err
		}
	}
	return nil
}

// regression writes regression task j's columns for a batch of size
// examples from its particles' predictions pred[particle][example]: the
// ensemble's mean, its standard deviation (the particles' spread and the
// task's noise variance, where the checkpoint has one) and the spread.
func (w *writer) regression(j int, pred [][]float64, size int) error {
	cs, m := w.cols[j], len(pred)
	for e := range size {
		var mean, sq float64
		for i := range m {
			mean += pred[i][e]
		}
		mean /= float64(m)
		for i := range m {
			d := pred[i][e] - mean
			sq += d * d
		}
		spread := math.Sqrt(sq / float64(m))
		sd := spread
		if !math.IsNaN(w.noise[j]) {
			sd = math.Sqrt(spread*spread + w.noise[j])
		}
		if err := errors.Join(w.put(cs[0], mean), w.put(cs[1], sd), w.put(cs[2], spread)); err != nil {
			return err
		}
		w.lastMean[j] = append(w.lastMean[j], [2]float64{mean, sd})
	}
	return nil
}

// classification writes classification task j's columns for a batch of
// size examples from its particles' probabilities
// pred[particle][example·classes + class]: the ensemble's mean
// probabilities (temperature-scaled where the checkpoint has a
// temperature), label, confidence and the uncertainties.
func (w *writer) classification(j int, pred [][]float64, size int) error {
	cs, k := w.cols[j], w.tasks[j].Classes
	if cap(w.mean) < k {
		w.mean = make([]float64, k)
	}
	mean := w.mean[:k]
	if cap(w.ps) < len(pred) {
		w.ps = make([][]float64, len(pred))
	}
	ps := w.ps[:len(pred)]
	for e := range size {
		for i := range pred {
			ps[i] = pred[i][e*k : (e+1)*k]
		}
		d := metrics.Disagree(mean, ps)
		if w.temps != nil && w.temps[j] != 1 {
			metrics.Temper(mean, mean, k, w.temps[j])
			d.Confidence = mean[d.Label]
		}
		w.last[j] = append(w.last[j], d)
		for _, v := range mean {
			if err := w.put(cs[0], v); err != nil {
				return err
			}
		}
		err := errors.Join(w.putInt(cs[1], d.Label), w.put(cs[2], d.Confidence), w.put(cs[3], d.Predictive),
			w.put(cs[4], d.Expected), w.put(cs[5], d.MutualInformation))
		if err != nil {
			return err
		}
	}
	return nil
}

// put writes v to column c as a little-endian float64, counting it if
// it is not finite.
func (w *writer) put(c *column, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.nonFinite++
	}
	binary.LittleEndian.PutUint64(w.buf[:], math.Float64bits(v))
	_, err := c.w.Write(w.buf[:])
	return err
}

// putInt writes v to column c as a little-endian int64.
func (w *writer) putInt(c *column, v int) error {
	binary.LittleEndian.PutUint64(w.buf[:], uint64(int64(v)))
	_, err := c.w.Write(w.buf[:])
	return err
}

// labels says what the ensemble predicts for example e of the last
// batch, a line per task.
func (w *writer) labels(e int) []string {
	var lines []string
	for j, t := range w.tasks {
		if t.Kind == data.Regression {
			lines = append(lines, fmt.Sprintf("%s: %.3g ± %.2g", t.Name, w.lastMean[j][e][0], w.lastMean[j][e][1]))
			continue
		}
		d := w.last[j][e]
		label := strconv.Itoa(d.Label)
		if d.Label < len(t.ClassNames) {
			label = t.ClassNames[d.Label]
		}
		lines = append(lines, fmt.Sprintf("%s: %s (%.2f)", t.Name, label, d.Confidence))
	}
	return lines
}

// finish flushes the columns and rewinds them for reading.
func (w *writer) finish() error {
	if w.rows != w.n {
		return fmt.Errorf("predicted %d examples of %d", w.rows, w.n)
	}
	all := slices.Concat(w.cols...)
	if w.ids != nil {
		all = append(all, w.ids)
	}
	for _, c := range all {
		if err := c.w.Flush(); err != nil {
			return err
		}
		if _, err := c.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	return nil
}

// writeNPZ writes every column as an array of path, to be put in place.
func (w *writer) writeNPZ(path string) (*atomicfile.Pending, error) {
	if err := w.finish(); err != nil {
		return nil, err
	}
	return atomicfile.Prepare(path, 0o644, func(out io.Writer) error {
		z := npz.NewWriter(out)
		for _, cs := range w.cols {
			for _, c := range cs {
				shape := []int{w.n}
				if c.width > 1 || strings.HasSuffix(c.name, "/probs") {
					shape = append(shape, c.width)
				}
				dst, err := z.Create(c.name, c.descr, shape)
				if err != nil {
					return err
				}
				if _, err := io.Copy(dst, c.f); err != nil {
					return err
				}
			}
		}
		if err := w.writeNPZIDs(z); err != nil {
			return err
		}
		return z.Close()
	})
}

// writeCSV writes one row per example, reading the columns side by
// side, to be put in place; it stops when ctx is done.
func (w *writer) writeCSV(ctx context.Context, path string) (*atomicfile.Pending, error) {
	if err := w.finish(); err != nil {
		return nil, err
	}
	return atomicfile.Prepare(path, 0o644, func(out io.Writer) error {
		bw := bufio.NewWriterSize(out, 1<<16)
		head := []string{"index"}
		var ids *bufio.Reader
		if w.ids != nil {
			head = append(head, csvField(w.idName))
			ids = bufio.NewReaderSize(w.ids.f, 1<<16)
		}
		var all []*column
		readers := map[*column]*bufio.Reader{}
		for _, cs := range w.cols {
			for _, c := range cs {
				all = append(all, c)
				readers[c] = bufio.NewReaderSize(c.f, 1<<16)
				if c.width > 1 || strings.HasSuffix(c.name, "/probs") {
					task := strings.TrimSuffix(c.name, "/probs")
					for k := range c.width {
						head = append(head, fmt.Sprintf("%s/p%d", task, k))
					}
				} else {
					head = append(head, c.name)
				}
				if c.names != nil {
					head = append(head, strings.TrimSuffix(c.name, "/label")+"/class")
				}
			}
		}
		bw.WriteString(strings.Join(head, ",") + "\n")
		var buf [8]byte
		line := make([]byte, 0, 256)
		for e := range w.n {
			if e%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			line = strconv.AppendInt(line[:0], int64(e), 10)
			if ids != nil {
				id, err := readID(ids)
				if err != nil {
					return fmt.Errorf("reading back the identifiers: %w", err)
				}
				line = append(append(line, ','), csvField(id)...)
			}
			for _, c := range all {
				for range c.width {
					if _, err := io.ReadFull(readers[c], buf[:]); err != nil {
						return fmt.Errorf("reading back %s: %w", c.name, err)
					}
					u := binary.LittleEndian.Uint64(buf[:])
					line = append(line, ',')
					if c.descr == "<i8" {
						line = strconv.AppendInt(line, int64(u), 10)
						if c.names != nil {
							name := ""
							if k := int64(u); k >= 0 && k < int64(len(c.names)) {
								name = c.names[k]
							}
							line = append(append(line, ','), csvField(name)...)
						}
					} else {
						line = strconv.AppendFloat(line, math.Float64frombits(u), 'g', -1, 64)
					}
				}
			}
			line = append(line, '\n')
			if _, err := bw.Write(line); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}

// readID reads one identifier as batch wrote it: its length, then its
// bytes.
func readID(r *bufio.Reader) (string, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", err
	}
	b := make([]byte, binary.LittleEndian.Uint32(n[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// csvField is v as a CSV field: quoted, with its quotes doubled, where it
// holds a separator, a quote or a line break (RFC 4180).
func csvField(v string) string {
	if !strings.ContainsAny(v, ",\"\r\n") {
		return v
	}
	return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
}
