package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/celeba"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
	"github.com/mtsgd/mtsgd/models"
	"github.com/mtsgd/mtsgd/models/resnet18"
)

// tinyPaperTrunk is the paper's ResNet-18 at width 2 (64 channels in
// layer4, 2×2 windows of its last pool, as at full width): the same code
// with a thousandth of the work, so that the whole CelebA protocol runs
// here in seconds.
const tinyPaperTrunk = "resnet18-cifar-width2"

func init() {
	experiment.RegisterModel(experiment.Model{Name: tinyPaperTrunk, New: func(shape []int, tasks []data.Task, _ experiment.Settings) (models.Model, error) {
		out := make([]int, len(tasks))
		for j := range out {
			out[j] = 2
		}
		return resnet18.PaperSmall(2, resnet18.Side, out...), nil
	}})
}

// -protocol paper-celeba plans the paper's CelebA runs (seed 1 of MT-SGD,
// linear, uw, GradNorm and MGDA, then MGDA's seeds 2-5, on all 40
// attributes; then one single-task run per attribute) on the whole
// training split with CelebA's defaults: the paper's trunk, Adam at 5e-4,
// batch 64, 100 epochs, 5 particles. It runs only on CelebA.
func TestPaperCelebAPlan(t *testing.T) {
	o, err := parseFlags([]string{"-dataset", "celeba", "-protocol", "paper-celeba", "-plan", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	p := o.plan()
	want := []string{"mtsgd-seed1", "linear-seed1", "uw-seed1", "gradnorm-seed1", "mgda-seed1", "mgda-seed2", "mgda-seed3", "mgda-seed4", "mgda-seed5"}
	for _, a := range celeba.Attributes {
		want = append(want, "single-"+a+"-seed1")
	}
	if len(p.Cells) != len(want) || !p.Attributes || p.Assess {
		t.Fatalf("%d cells, attributes %v, assess %v", len(p.Cells), p.Attributes, p.Assess)
	}
	for i, c := range p.Cells {
		s := c.Settings
		tasks := "40"
		if j := i - 9; j >= 0 {
			tasks = celeba.Attributes[j] // single-task training: one attribute a run
			if s.Method != "single" {
				t.Errorf("cell %d: method %s, want single", i, s.Method)
			}
		}
		if c.Dir != want[i] || s.Tasks != tasks || s.TrainLimit != 0 || s.Model != "resnet18-cifar" || s.Epochs != 100 ||
			s.Batch != 64 || s.LR != 5e-4 || s.Optimizer != experiment.OptimizerAdam || s.Particles != 5 {
			t.Errorf("cell %d: %s %+v", i, c.Dir, s)
		}
	}
	if _, err := parseFlags([]string{"-dataset", "multi-mnist", "-protocol", "paper-celeba"}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "needs -dataset celeba") {
		t.Errorf("paper-celeba on multi-mnist: %v", err)
	}
	if _, err := parseFlags([]string{"-dataset", "celeba", "-protocol", "paper-celeba", "-model", "vgg"}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), `-model: model "vgg" is not one of`) {
		t.Errorf("-model vgg: %v", err)
	}
}

// The paper's CelebA protocol end to end on a fixture in CelebA's official
// layout, on the CPU: every cell trains one epoch of two particles of the
// paper's trunk at width 2 on 4 training images and 2 validation and
// test images, with all 40 attributes; -aggregate writes the comparison,
// the per-attribute error and ECE tables and the radar charts; -slurm
// writes a job array of one task per cell.
func TestPaperCelebAEndToEnd(t *testing.T) {
	dir := testenv.CelebAFixture(t, 40, nil)
	out := t.TempDir()
	o, err := parseFlags([]string{"-dataset", "celeba", "-protocol", "paper-celeba", "-data-dir", dir, "-model", tinyPaperTrunk,
		"-epochs", "1", "-particles", "2", "-train-limit", "4", "-test-limit", "2", "-out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := dispatch(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	o, err = parseFlags([]string{"-aggregate", "-out", out}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	tables, err := os.ReadFile(filepath.Join(out, study.AttributesFile))
	if err != nil {
		t.Fatal(err)
	}
	text := string(tables)
	for _, want := range []string{"| mtsgd (1) | paper | linear (1) | paper | uw (1) | paper | gradnorm (1) | paper | mgda (5) | paper | single (1) | paper |",
		"| Young | hard |", "| 5_o_Clock_Shadow | easy |", "## Test ECE (%) per attribute"} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", study.AttributesFile, want, text)
		}
	}
	for _, a := range celeba.Attributes {
		if strings.Count(text, "| "+a+" |") != 2 {
			t.Errorf("%s: attribute %s is not once in each table", study.AttributesFile, a)
		}
	}
	// The single-task column is the forty one-attribute runs of single,
	// a figure per attribute: no cell of it missing.
	for _, line := range strings.Split(text, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) == 16 && slices.Contains(celeba.Attributes, strings.TrimSpace(cells[1])) {
			if v := strings.TrimSpace(cells[12]); v == "" || v == "—" {
				t.Errorf("%s: the single-task figure of %s is %q", study.AttributesFile, cells[1], v)
			}
		}
	}
	if strings.Count(text, "single (1)") != 2 {
		t.Errorf("%s: the single-task runs are not one column in each table", study.AttributesFile)
	}
	// With single's rows, compare.md gives each method's Δm %.
	if cmp, err := os.ReadFile(filepath.Join(out, "compare.md")); err != nil || !strings.Contains(string(cmp), "| method | Δm % against single-task |") ||
		strings.Contains(string(cmp), "| mtsgd | — |") {
		t.Errorf("compare.md has no Δm %% of mtsgd against single-task: %v", err)
	}
	for _, a := range celeba.Attributes {
		res, ok, err := plan.ReadResult(filepath.Join(out, "single-"+a+"-seed1"))
		if err != nil || !ok {
			t.Fatalf("single-task run of %s: %v", a, err)
		}
		for _, l := range res.History {
			if l.Task != a {
				t.Fatalf("the single-task run of %s trained %s", a, l.Task)
			}
		}
	}
	for _, f := range []string{study.RadarFile, "compare.md", plan.CurvesFile} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	sweep := t.TempDir()
	o, err = parseFlags([]string{"-dataset", "celeba", "-protocol", "paper-celeba", "-data-dir", dir, "-out", sweep, "-slurm"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dispatch(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(sweep, plan.SbatchFile))
	if err != nil || !strings.Contains(string(script), "#SBATCH --array=0-48\n") || !strings.Contains(string(script), "-cell \"$SLURM_ARRAY_TASK_ID\"") {
		t.Errorf("%s: %v\n%s", plan.SbatchFile, err, script)
	}
}

// With -device cuda the job array asks Slurm for a GPU per task and the
// Kubernetes Job one per pod, and both run their cells there.
func TestSweepFilesAskForAGPU(t *testing.T) {
	o, err := parseFlags([]string{"-dataset", "celeba", "-protocol", "paper-celeba", "-plan", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	p := o.plan()
	s := SlurmOptions{CPUs: 4, Mem: "32G", Time: "48:00:00", Image: "mtsgd:latest", Device: "cuda"}
	script := sbatchScript(p, s, "compare", "/shared/celeba", "/data")
	job, err := k8sJob(p, s, "celeba")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --gres=gpu:1\n", " -device cuda\n"} {
		if !strings.Contains(script, want) {
			t.Errorf("sbatch script lacks %q:\n%s", want, script)
		}
	}
	for _, want := range []string{`"-workers", "4", "-device", "cuda"]`, "limits:\n              memory: 32Gi\n              nvidia.com/gpu: 1\n"} {
		if !strings.Contains(job, want) {
			t.Errorf("Kubernetes Job lacks %q:\n%s", want, job)
		}
	}
	s.Device = "cpu"
	if job, _ := k8sJob(p, s, "celeba"); strings.Contains(job, "gpu") || strings.Contains(job, "cuda") {
		t.Errorf("a CPU sweep's Job asks for a GPU:\n%s", job)
	}
}
