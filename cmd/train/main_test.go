package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/cmd/internal/curves"
	"github.com/mtsgd/mtsgd/cmd/internal/imagegrid"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

func TestRunWritesCSVAndPlot(t *testing.T) {
	for _, dataset := range []string{"mog3", "zdt3"} {
		for _, method := range []string{"mtsgd", "moo-svgd"} {
			out := t.TempDir()
			o, err := parseFlags([]string{"-dataset", dataset, "-method", method, "-particles", "7", "-steps", "20", "-lr", "0.01", "-seed", "3", "-out", out, "-progress=false"}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if err := run(context.Background(), o); err != nil {
				t.Fatalf("%s/%s: %v", dataset, method, err)
			}
			f, err := os.Open(filepath.Join(out, "particles.csv"))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(f).ReadAll()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			dim := map[string]int{"mog3": 2, "zdt3": 30}[dataset]
			if len(rows) != 8 || len(rows[0]) != dim+1 || rows[0][0] != "particle" || rows[0][dim] != "theta_"+strconv.Itoa(dim-1) {
				t.Fatalf("%s: CSV has %d rows, header %v", dataset, len(rows), rows[0])
			}
			for i, row := range rows[1:] {
				if row[0] != strconv.Itoa(i) {
					t.Errorf("row %d is labelled %q", i, row[0])
				}
				for _, v := range row[1:] {
					if _, err := strconv.ParseFloat(v, 64); err != nil {
						t.Errorf("row %d: %v", i, err)
					}
				}
			}
			img, err := os.Open(filepath.Join(out, "particles.png"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := png.Decode(img); err != nil {
				t.Errorf("%s: particles.png: %v", dataset, err)
			}
			img.Close()
		}
	}
}

// The same seed gives byte-identical results; another seed does not.
func TestRunIsReproducible(t *testing.T) {
	read := func(seed string) string {
		out := t.TempDir()
		o, err := parseFlags([]string{"-dataset", "mog3", "-particles", "5", "-steps", "30", "-seed", seed, "-out", out, "-progress=false"}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "particles.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := read("7"), read("7"); a != b {
		t.Error("seed 7 twice: different particles")
	}
	if read("7") == read("8") {
		t.Error("seeds 7 and 8: same particles")
	}
}

func TestParseFlagsRejectsBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "-dataset is required"},
		{[]string{"-dataset", "mog3", "-particles", "0"}, "-particles"},
		{[]string{"-dataset", "mog3", "-lr", "-1"}, "-lr"},
		{[]string{"-dataset", "mog3", "-lr", "NaN"}, "-lr"},
		{[]string{"-dataset", "mog3", "-optimizer", "rmsprop"}, "-optimizer"},
		{[]string{"-dataset", "mog3", "-momentum", "1"}, "-momentum"},
		{[]string{"-dataset", "mog3", "-kernel-scale", "0"}, "-kernel-scale"},
		{[]string{"-dataset", "mog3", "-repulsion", "-0.5"}, "-repulsion"},
		{[]string{"-dataset", "mog3", "extra"}, "unexpected arguments"},
		{[]string{"-dataset", "mog3", "-steps", "ten"}, "invalid value"},
		{[]string{"-dataset", "multi-mnsit"}, `-dataset "multi-mnsit" is not one of mog3, zdt3, multi-mnist, multi-fashion, multi-fashion-mnist`},
	}
	for _, tt := range tests {
		_, err := parseFlags(tt.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tt.args, err, tt.want)
		}
	}
}

// Unknown methods are refused with the list of those that exist, for
// toy problems and networks.
func TestRejectsUnknownMethods(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "mog3", "-method", "adamw"}, "(" + strings.Join(toyMethods(), ", ") + ")"},
		{[]string{"-dataset", "mog3", "-method", "single"}, "not one for toy problems"},
		{[]string{"-dataset", "multi-mnist", "-method", "adamw"}, strings.Join(experiment.MethodNames(nil), ", ")},
	} {
		_, err := parseFlags(tc.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// The default -out names the data set, or for -data DIR the directory
// and a hash of its absolute path, so that runs on two directories, even
// of one name, do not meet in one run directory.
func TestParseFlagsDefaultOut(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tag := func(abs string) string { // independently: SHA-256's first 3 bytes
		sum := sha256.Sum256([]byte(abs))
		return fmt.Sprintf("%x", sum[:3])
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "zdt3", "-method", "mgda", "-seed", "4"}, "zdt3-mgda-seed4"},
		{[]string{"-data", "penguins/", "-seed", "2"}, "penguins-" + tag(filepath.Join(cwd, "penguins")) + "-mtsgd-seed2"},
		{[]string{"-data", "/data/sales", "-method", "linear"}, "sales-" + tag("/data/sales") + "-linear-seed1"},
		{[]string{"-data", "/other/sales", "-method", "linear"}, "sales-" + tag("/other/sales") + "-linear-seed1"},
	} {
		o, err := parseFlags(tc.args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if o.Out != filepath.Join("runs", tc.want) {
			t.Errorf("%q: default -out = %q, want runs/%s", tc.args, o.Out, tc.want)
		}
	}
}

// On the real data: -stats prints both splits with their sizes, -preview
// writes a 4×4 grid, and a missing data directory is a clear error.
func TestStatsAndPreview(t *testing.T) {
	for _, dataset := range []string{"multi-mnist", "multi-fashion", "multi-fashion-mnist"} {
		t.Run(dataset, func(t *testing.T) {
			o, err := parseFlags([]string{"-dataset", dataset, "-stats"}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			d, err := loadData(o.Settings, o.DataDir)
			testenv.CheckData(t, err)
			train := d.Train
			for _, d := range []data.Dataset{d.Train, d.Valid, d.Test} {
				if err := writeStats(&out, d); err != nil {
					t.Fatal(err)
				}
			}
			for _, want := range []string{dataset + "/train: 110000 examples, input 1×36×36, 2 tasks", dataset + "/valid: 10000 examples",
				dataset + "/test: 20000 examples", "top-left       0:", "bottom-right   0:"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stats output lacks %q:\n%s", want, out.String())
				}
			}

			var pix bytes.Buffer
			if err := writePreview(&pix, train, 16, 1); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&pix)
			if err != nil {
				t.Fatal(err)
			}
			cellW := 36*imagegrid.Zoom + 2*imagegrid.Pad
			if b := img.Bounds(); b.Dx() < 4*cellW || b.Dy() < 4*36*imagegrid.Zoom {
				t.Errorf("preview is %v, too small for a 4×4 grid", b)
			}
		})
	}
	t.Run("missing data", func(t *testing.T) {
		dir := t.TempDir()
		o, err := parseFlags([]string{"-dataset", "multi-mnist", "-stats", "-data-dir", dir}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		err = run(context.Background(), o)
		if !errors.Is(err, data.ErrMissing) || !strings.Contains(err.Error(), filepath.Join(dir, "mnist")) {
			t.Errorf("error %v, want ErrMissing naming %s", err, dir)
		}
	})
}

// A short real run: two epochs on a few examples write one metrics line per
// split (validation, then test) and task per epoch, and their chart, and
// the same seed writes the same figures.
func TestTrainNetworkWritesMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks on real data")
	}
	runOnce := func() []map[string]any {
		out := t.TempDir()
		o, err := parseFlags([]string{"-dataset", "multi-mnist", "-particles", "2", "-epochs", "2", "-batch", "16",
			"-train-limit", "48", "-test-limit", "40", "-lr", "0.01", "-warmup", "1", "-seed", "5", "-out", out, "-progress=false"}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		err = run(context.Background(), o)
		testenv.CheckData(t, err)
		b, err := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		testenv.CheckPNG(t, filepath.Join(out, curves.FileName))
		var lines []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("metrics line %q: %v", l, err)
			}
			delete(m, "seconds")
			lines = append(lines, m)
		}
		return lines
	}
	a := runOnce()
	if len(a) != 8 {
		t.Fatalf("%d metrics lines, want 2 epochs × 2 splits × 2 tasks", len(a))
	}
	for i, l := range a {
		wantTask := []string{"top-left", "bottom-right"}[i%2]
		wantSplit := []string{"valid", "test"}[i/2%2]
		if l["epoch"] != float64(1+i/4) || l["split"] != wantSplit || l["task"] != wantTask || l["step"] != float64(3*(1+i/4)) {
			t.Errorf("line %d: epoch %v split %v task %v step %v", i, l["epoch"], l["split"], l["task"], l["step"])
		}
		for _, k := range []string{"accuracy", "brier", "ece", "nll", "train_loss", "lr"} {
			if _, ok := l[k].(float64); !ok {
				t.Errorf("line %d has no number %q: %v", i, k, l)
			}
		}
		if ps, ok := l["particles"].([]any); !ok || len(ps) != 2 {
			t.Errorf("line %d: particles %v", i, l["particles"])
		}
	}
	if b := runOnce(); !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different metrics:\n%v\n%v", a, b)
	}
}

func TestParseFlagsKinds(t *testing.T) {
	o, err := parseFlags([]string{"-dataset", "multi-fashion"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Particles != 5 || o.LR != 1e-3 || o.Optimizer != experiment.OptimizerSGD || o.Epochs != 100 || o.Batch != 256 {
		t.Errorf("network defaults: %+v", o)
	}
	if o, err = parseFlags([]string{"-dataset", "mog3"}, &bytes.Buffer{}); err != nil || o.Particles != 50 || o.LR != 0.03 || o.Optimizer != experiment.OptimizerAdam {
		t.Errorf("toy defaults: %+v, %v", o, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "multi-mnist", "-steps", "5"}, "-steps does not apply to -dataset multi-mnist: it is for toy problems"},
		{[]string{"-dataset", "mog3", "-epochs", "5"}, "-epochs does not apply to -dataset mog3: it is for network data sets"},
		{[]string{"-dataset", "multi-mnist", "-lr-milestones", "30,15"}, "-lr-milestones: milestones [30 15] are not increasing"},
		{[]string{"-dataset", "multi-mnist", "-lr-schedule", "cosine"}, "-lr-schedule must be"},
		{[]string{"-dataset", "multi-mnist", "-dtype", "float16"}, "-dtype must be"},
		{[]string{"-dataset", "multi-mnist", "-batch", "0"}, "-batch must be"},
		{[]string{"-dataset", "multi-mnist", "-device", "tpu"}, `-device must be cpu or cuda, got "tpu"`},
		{[]string{"-dataset", "mog3", "-device", "cuda"}, "-device does not apply to -dataset mog3"},
	} {
		if _, err := parseFlags(tc.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// asMainEnv makes the test binary run main with the arguments in it, so
// that a test can signal a real train process.
const asMainEnv = "MTSGD_TRAIN_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(asMainEnv); args != "" {
		os.Args = append([]string{"train"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// SIGINT in the middle of an epoch saves DIR/last and exits with status 3;
// train -resume DIR then finishes the run.
func TestInterruptAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks on real data")
	}
	_, _, err := experiment.LoadData(experiment.Settings{Dataset: "multi-mnist", Seed: 1}, "")
	testenv.CheckData(t, err)
	out := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), asMainEnv+"=-dataset multi-mnist -particles 2 -epochs 2 -batch 16 -train-limit 480 -test-limit 32 -lr 0.01 -out "+out)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var log strings.Builder
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "epoch 1/2: 6/30") {
			cmd.Process.Signal(os.Interrupt)
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != cli.ExitInterrupted {
		t.Fatalf("train exited with %v, want status %d; log:\n%s", err, cli.ExitInterrupted, log.String())
	}
	if !strings.Contains(log.String(), "continue with: train -resume "+out) {
		t.Errorf("log does not say how to resume:\n%s", log.String())
	}
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Epoch != 0 || c.Batch < 6 || c.Batch >= 30 {
		t.Fatalf("checkpoint at epoch %d batch %d, want inside the first epoch", c.Epoch, c.Batch)
	}

	o, err := parseFlags([]string{"-resume", out, "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if c, err = checkpoints.Load(filepath.Join(out, "last")); err != nil || c.Epoch != 2 || c.Step != 60 {
		t.Fatalf("after resuming: %v, epoch %d step %d; want 2, 60", err, c.Epoch, c.Step)
	}
}

func TestResumeFlags(t *testing.T) {
	if _, err := parseFlags([]string{"-resume", "runs/x", "-lr", "0.1"}, &bytes.Buffer{}); err == nil || err.Error() != "-lr cannot be given with -resume: the checkpoint fixes it" {
		t.Errorf("error %v", err)
	}
	o, err := parseFlags([]string{"-resume", "runs/x", "-epochs", "7", "-workers", "1"}, &bytes.Buffer{})
	if err != nil || o.Out != "runs/x" || o.Epochs != 7 {
		t.Errorf("%+v, %v", o, err)
	}
	o, _ = parseFlags([]string{"-resume", t.TempDir()}, &bytes.Buffer{})
	if err := run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no checkpoint here") {
		t.Errorf("resuming an empty directory: %v", err)
	}
}

// SARCOS on a fixture with the real shapes, written by scipy: training
// writes validation and test lines for all 7 tasks, and best/ is chosen by
// validation MSE. The authors' preset runs its kernels over the MLP's
// features and the regression heads' outputs, heads first.
func TestTrainSarcosFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	dir := testenv.SarcosFixture(t)
	out := t.TempDir()
	o, err := parseFlags([]string{"-dataset", "sarcos", "-data-dir", dir, "-particles", "2", "-epochs", "2", "-train-limit", "1024",
		"-test-limit", "256", "-lr", "0.001", "-out", out, "-progress=false", "-preset", "authors", "-warmup", "0", "-log-qp"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Model != "mlp" || o.Batch != 512 || o.Optimizer != experiment.OptimizerAdam || o.BestMetric != "mse" || o.Schedule != experiment.ScheduleConstant {
		t.Errorf("SARCOS defaults: model %s batch %d optimizer %s best %s schedule %s", o.Model, o.Batch, o.Optimizer, o.BestMetric, o.Schedule)
	}
	logged := captureLog(t)
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	checkQPLogged(t, logged.String(), 4, 7) // 1024 examples, batch 512, 2 epochs
	lines := metricsLines(t, out)
	if len(lines) != 2*2*7 {
		t.Fatalf("%d metrics lines, want 2 epochs × 2 splits × 7 tasks", len(lines))
	}
	var first map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	if first["split"] != "valid" || first["task"] != "torque1" {
		t.Errorf("first line %v", first)
	}
	if mse, ok := first["mse"].(float64); !ok || !(mse > 0) {
		t.Errorf("first line has no MSE: %v", first)
	}
	for _, name := range []string{"last", "best"} {
		if _, err := checkpoints.Load(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}

// CelebA in its official layout (a fixture of 40 small JPEGs with the
// real attribute and partition file formats): the defaults are the
// paper's, and one epoch of two ResNet-18 particles trains, with a
// validation and a test line per task and checkpoints that carry the
// batch norms' running statistics, moved away from their initial values.
// The authors' preset runs its kernels over ResNet-18's features (through
// batch normalisation, on a padded batch) and the heads' outputs. The run
// trains torchvision's layout (-model resnet18: the same batch norms and
// checkpoint as the default resnet18-cifar, a 15th of its work).
func TestTrainCelebAFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("trains ResNet-18")
	}
	dir := testenv.CelebAFixture(t, 40, nil)
	out := t.TempDir()
	args := []string{"-dataset", "celeba", "-data-dir", dir}
	if o, err := parseFlags(args, &bytes.Buffer{}); err != nil || o.Model != "resnet18-cifar" {
		t.Fatalf("CelebA's default model: %q, %v; want resnet18-cifar", o.Model, err)
	}
	// Batch 16: the 24 training images make one full batch and one padded.
	o, err := parseFlags(append(args, "-model", "resnet18", "-particles", "2", "-epochs", "1", "-batch", "16",
		"-out", out, "-progress=false", "-preset", "authors", "-warmup", "0", "-log-qp"), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Model != "resnet18" || o.Optimizer != experiment.OptimizerAdam || o.LR != 5e-4 || o.Schedule != experiment.ScheduleExponential || o.Gamma != 0.85 ||
		o.Every != 10 || o.Tasks != "10" || o.TrainLimit != 40000 || o.BestMetric != "accuracy" {
		t.Errorf("CelebA defaults: %+v", o.Settings)
	}
	logged := captureLog(t)
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	checkQPLogged(t, logged.String(), 2, 10)
	lines := metricsLines(t, out)
	if len(lines) != 2*10 {
		t.Fatalf("%d metrics lines, want 2 splits × 10 tasks", len(lines))
	}
	var last map[string]any
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if last["split"] != "test" || last["task"] != "Blond_Hair" {
		t.Errorf("last line %v", last)
	}
	c, err := checkpoints.Load(filepath.Join(out, "last"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Step != 2 || len(c.Layout.Stats) != 40 || c.Layout.Stats[1].Name != "bn1.running_var" {
		t.Fatalf("checkpoint at step %d with %d statistics tensors", c.Step, len(c.Layout.Stats))
	}
	// bn1's running means start at 0: two updates move them.
	if mean := c.Particles[0].Stats[0]; mean == 0 {
		t.Errorf("bn1's running mean is still %v after two steps", mean)
	}
	if _, err := checkpoints.Load(filepath.Join(out, "best")); err != nil {
		t.Error(err)
	}
}

// metricsLines returns the lines of out/metrics.jsonl.
func metricsLines(t *testing.T, out string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// Presets and the flags beside them: the default is the authors' preset;
// -preset paper sets its choices; a flag given with a preset overrides
// that one choice; -score-scale alone moves the repulsion weights to its
// own defaults; other methods drop MT-SGD's choices; bad values are
// refused naming the flag.
func TestPresetFlags(t *testing.T) {
	auto := float64(experiment.AutoRepulsion)
	for _, tc := range []struct {
		args                  []string
		preset, scale, uterms string
		warmup                int
		kernelOn, order       string
		repulsion, heads      float64
		valid                 int
	}{
		{[]string{}, "authors-params", "normalized", "first", 1, "params", "joint", auto, auto, 10000},
		{[]string{"-preset", "paper"}, "paper", "mean", "full", 0, "params", "joint", auto, auto, 10000},
		{[]string{"-preset", "authors"}, "authors", "normalized", "first", 1, "outputs", "heads-first", auto, auto, 10000},
		{[]string{"-preset", "paper", "-warmup", "2", "-u-terms", "first", "-kernel-on", "outputs"}, "paper", "mean", "first", 2, "outputs", "joint", auto, auto, 10000},
		{[]string{"-preset", "authors", "-order", "joint"}, "authors", "normalized", "first", 1, "outputs", "joint", auto, auto, 10000},
		{[]string{"-order", "heads-first"}, "authors-params", "normalized", "first", 1, "params", "heads-first", auto, auto, 10000},
		{[]string{"-score-scale", "sum"}, "authors-params", "sum", "first", 1, "params", "joint", auto, auto, 10000},
		{[]string{"-repulsion", "0.5", "-head-repulsion", "0.1", "-valid", "0"}, "authors-params", "normalized", "first", 1, "params", "joint", 0.5, 0.1, 0},
		{[]string{"-method", "linear"}, "", "mean", "", 0, "", "", auto, auto, 10000},
	} {
		o, err := parseFlags(append([]string{"-dataset", "multi-mnist"}, tc.args...), &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		s := o.Settings
		if s.Preset != tc.preset || s.ScoreScale.String() != tc.scale || s.UTerms.String() != tc.uterms || s.Warmup != tc.warmup ||
			s.KernelOn.String() != tc.kernelOn || s.Order.String() != tc.order ||
			s.Repulsion != tc.repulsion || s.HeadRepulsion != tc.heads || s.Valid != tc.valid {
			t.Errorf("%v: preset %q scale %q u %q warmup %d kernel-on %q order %q repulsion %v/%v valid %d", tc.args,
				s.Preset, s.ScoreScale, s.UTerms, s.Warmup, s.KernelOn, s.Order, s.Repulsion, s.HeadRepulsion, s.Valid)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-dataset", "multi-mnist", "-preset", "pytorch"}, `-preset: preset "pytorch" is not one of paper, authors, authors-params`},
		{[]string{"-dataset", "multi-mnist", "-preset", "authors", "-u-terms", "full"}, "-kernel-on outputs needs -u-terms first"},
		{[]string{"-dataset", "multi-mnist", "-kernel-on", "features"}, `-kernel-on: kernel space "features" is not one of`},
		{[]string{"-dataset", "multi-mnist", "-order", "trunk-first"}, "-order must be joint or heads-first"},
		{[]string{"-dataset", "multi-mnist", "-method", "linear", "-kernel-on", "outputs"}, "linear has none"},
		{[]string{"-dataset", "multi-mnist", "-score-scale", "median"}, "-score-scale"},
		{[]string{"-dataset", "multi-mnist", "-u-terms", "two"}, "-u-terms must be full or first"},
		{[]string{"-dataset", "multi-mnist", "-valid", "3"}, "-valid must be"},
		{[]string{"-dataset", "sarcos", "-valid", "1000"}, "-valid holds out training examples for validation on multi-mnist, multi-fashion, multi-fashion-mnist, files; sarcos has its own validation split"},
		{[]string{"-dataset", "mog3", "-preset", "paper"}, "-preset does not apply to -dataset mog3"},
	} {
		if _, err := parseFlags(tc.args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// captureLog sends the log to a buffer until the test ends.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	log.SetOutput(&b)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	return &b
}

// checkQPLogged checks that -log-qp logged one certified QP with k
// weights for each of the run's steps, 1 to steps.
func checkQPLogged(t *testing.T, logged string, steps, k int) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(logged, "\n") {
		if !strings.Contains(line, "msg=qp") {
			continue
		}
		n++
		if want := fmt.Sprintf("K=%d certified=true", k); !strings.Contains(line, want) || !strings.Contains(line, fmt.Sprintf("step=%d ", n)) {
			t.Errorf("QP line %d, want %q and step=%d: %s", n, want, n, line)
		}
	}
	if n != steps {
		t.Errorf("%d QP lines, want one per step (%d):\n%s", n, steps, logged)
	}
}

// Flags that contradict each other or the data set are refused, each
// with a message naming the flag at fault; -resume takes a run directory
// or its last/.
func TestParseFlagsConflicts(t *testing.T) {
	run := t.TempDir()
	if err := os.MkdirAll(filepath.Join(run, "last"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "last", checkpoints.ManifestName), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(run, "last")
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error; "" for none
	}{
		{"unknown data set before -epochs", []string{"-dataset", "mnistx", "-epochs", "1"}, `-dataset "mnistx" is not one of`},
		{"resume RUN/last", []string{"-resume", last}, ""},
		{"resume RUN/last/", []string{"-resume", last + "/", "-epochs", "3"}, ""},
		{"resume RUN", []string{"-resume", run}, ""},
		{"resume -epochs 0", []string{"-resume", run, "-epochs", "0"}, "-epochs must be at least 1, got 0"},
		{"resume -epochs -5", []string{"-resume", run, "-epochs", "-5"}, "-epochs must be at least 1, got -5"},
		{"stats with preview", []string{"-dataset", "multi-mnist", "-stats", "-preview", "x.png"}, "-stats and -preview"},
		{"adam with momentum", []string{"-dataset", "multi-mnist", "-optimizer", "adam", "-momentum", "0.5"}, "-momentum applies to -optimizer sgd only"},
		{"default adam with momentum", []string{"-dataset", "sarcos", "-momentum", "0.5"}, "-momentum applies to -optimizer sgd only"},
		{"sgd with momentum", []string{"-dataset", "multi-mnist", "-optimizer", "sgd", "-momentum", "0.5"}, ""},
		{"constant with milestones", []string{"-dataset", "multi-mnist", "-lr-schedule", "constant", "-lr-milestones", "5,10"}, "-lr-milestones applies to -lr-schedule multistep only"},
		{"multistep with milestones", []string{"-dataset", "multi-mnist", "-lr-milestones", "5,10"}, ""},
		{"duplicate task", []string{"-dataset", "celeba", "-tasks", "Male,Male"}, "attribute Male is given twice"},
		{"distinct tasks", []string{"-dataset", "celeba", "-tasks", "Male,Smiling"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args, &bytes.Buffer{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				if o.Resume != "" && (o.Resume != run || o.Out != run) {
					t.Errorf("-resume %s: resumes %s into %s, want %s", tc.args[1], o.Resume, o.Out, run)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// -dataset takes toy problems and network data sets from two registries:
// a name in both would leave the toy problem unreachable.
func TestDatasetNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range datasetNames() {
		if seen[name] {
			t.Errorf("-dataset %s names both a toy problem and a network data set", name)
		}
		seen[name] = true
	}
}
