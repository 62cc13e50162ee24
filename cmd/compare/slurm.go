package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// The files -slurm writes in OUT beside plan.SbatchFile, the job array,
// and the folder the array's logs go to.
const (
	JobFile = "sweep-job.yaml"
	LogDir  = "slurm"
)

// SlurmOptions are the -slurm flags: the resources of each cell.
type SlurmOptions struct {
	Write     bool   // -slurm
	Submit    bool   // -submit
	CPUs      int    // -slurm-cpus
	Mem       string // -slurm-mem, as sbatch --mem takes it (4G, 4000M)
	Time      string // -slurm-time, as sbatch --time takes it
	Partition string // -slurm-partition; "" the cluster's default
	Image     string // -k8s-image
	Device    string // -device: with cuda each task asks for a GPU
}

// writeSweep writes the plan, OUT/sweep.sbatch and OUT/sweep-job.yaml,
// and submits the script with sbatch when asked, printing the job id.
func writeSweep(ctx context.Context, o Options, stdout io.Writer) error {
	if err := o.Slurm.check(); err != nil {
		return err
	}
	p, err := makePlan(o, stdout)
	if err != nil {
		return err
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return fmt.Errorf("-out %s: %w", o.Out, err)
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the compare binary for %s: %w", plan.SbatchFile, err)
	}
	if strings.Contains(bin, string(filepath.Separator)+"go-build") {
		log.WithField("binary", bin).Warn("compare runs from go run's temporary directory, gone when it ends: build it (go build ./cmd/compare) and run -slurm with that binary")
	}
	dataDir := o.DataDir
	if dataDir != "" {
		if dataDir, err = filepath.Abs(dataDir); err != nil {
			return fmt.Errorf("-data-dir %s: %w", o.DataDir, err)
		}
	}
	// Written into the script: -out was checked with the flags, the
	// others are checked here.
	for _, v := range []struct{ what, value string }{{"-out " + out, out}, {"-data-dir", dataDir}, {"the compare binary", bin}} {
		if err := scriptSafe(v.what, v.value); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(out, LogDir), 0o755); err != nil {
		return fmt.Errorf("creating the log folder: %w", err)
	}
	script := sbatchScript(p, o.Slurm, bin, out, dataDir)
	job, err := k8sJob(p, o.Slurm, out)
	if err != nil {
		return err
	}
	for _, f := range []struct{ name, text string }{{plan.SbatchFile, script}, {JobFile, job}} {
		path, text := filepath.Join(out, f.name), f.text
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		fmt.Fprintln(stdout, "wrote", path)
	}
	return submitSweep(ctx, o, filepath.Join(out, plan.SbatchFile), arrays(p), stdout)
}

// submitSweep submits job script sbatch, an array per stage of cells
// (stages, in sbatch --array's form), each stage after the one before
// has ended, with -submit; without, it prints the commands that would.
// It prints the jobs' IDs.
func submitSweep(ctx context.Context, o Options, sbatch string, stages []string, stdout io.Writer) error {
	if len(stages) == 1 {
		if !o.Slurm.Submit {
			fmt.Fprintf(stdout, "submit with: sbatch %s\n", sbatch)
			return nil
		}
		id, err := submit(ctx, sbatch)
		if err != nil {
			return err
		}
		log.WithField("job", id).Infof("submitted; watch with squeue -j %s, then compare -aggregate -out %s", id, o.Out)
		_, err = fmt.Fprintln(stdout, id)
		return err
	}
	// The tuned protocol's stages wait for each other: one array each,
	// each started once the one before has ended.
	if !o.Slurm.Submit {
		fmt.Fprintf(stdout, "submit with: sbatch --array=%s %s, then each of", stages[0], sbatch)
		for _, a := range stages[1:] {
			fmt.Fprintf(stdout, " sbatch --array=%s --dependency=afterany:JOBID %s,", a, sbatch)
		}
		fmt.Fprintln(stdout, " JOBID that of the array before")
		return nil
	}
	var ids []string
	for i, a := range stages {
		args := []string{"--array=" + a}
		if i > 0 {
			args = append(args, "--dependency=afterany:"+ids[i-1])
		}
		id, err := submit(ctx, sbatch, args...)
		if err != nil {
			if i > 0 {
				return fmt.Errorf("jobs %s are submitted: %w", strings.Join(ids, ","), err)
			}
			return err
		}
		ids = append(ids, id)
	}
	log.WithField("jobs", strings.Join(ids, ",")).Infof("submitted; watch with squeue -j %s, then compare -aggregate -out %s", strings.Join(ids, ","), o.Out)
	_, err := fmt.Fprintln(stdout, strings.Join(ids, "\n"))
	return err
}

// arrays are the plan's cells as sbatch --array lists, one per stage
// that must wait for the one before: all cells in one for a comparison at
// one rate; for the tuned protocol the search's grid, each level above
// it (Cell.Level), then the final cells.
func arrays(p plan.Plan) []string {
	if p.Search == nil {
		return []string{fmt.Sprintf("0-%d", len(p.Cells)-1)}
	}
	stage := func(c plan.Cell) int {
		if c.Stage == plan.StageFinal {
			return len(p.Search.Extend) + 1
		}
		return c.Level
	}
	lists := make([][]string, len(p.Search.Extend)+2)
	for _, c := range p.Cells {
		lists[stage(c)] = append(lists[stage(c)], strconv.Itoa(c.Index))
	}
	var out []string
	for _, l := range lists {
		if len(l) > 0 {
			out = append(out, strings.Join(l, ","))
		}
	}
	return out
}

// submit runs sbatch on script, with options before it, and returns the
// job id.
func submit(ctx context.Context, script string, options ...string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "sbatch", append(append([]string{"--parsable"}, options...), script)...)
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("-submit: sbatch %s: %w: %s", script, err, strings.TrimSpace(stderr.String()))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(b)), ";") // "ID;CLUSTER" on a federation
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("-submit: sbatch %s printed %q, not a job id", script, b)
	}
	return id, nil
}

// sbatchScript is a job array with one task per cell: each runs compare
// -cell with its task id. compare is exec'ed so that Slurm's SIGTERM
// before the time limit reaches it and it saves its run's last/.
func sbatchScript(p plan.Plan, s SlurmOptions, bin, out, dataDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "# A Slurm job array over the %d cells of %s, written by compare -slurm:\n", len(p.Cells), filepath.Join(out, plan.PlanFile))
	fmt.Fprintf(&b, "# task I runs compare -cell I. Rerun missing cells with sbatch --array=LIST %s,\n", filepath.Join(out, plan.SbatchFile))
	fmt.Fprintf(&b, "# then tabulate with compare -aggregate -out %s (docs/sweeps.md).\n", out)
	fmt.Fprintf(&b, "#SBATCH --job-name=compare-%s\n", p.Dataset)
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", len(p.Cells)-1)
	fmt.Fprintf(&b, "#SBATCH --ntasks=1\n")
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", s.CPUs)
	fmt.Fprintf(&b, "#SBATCH --mem=%s\n", s.Mem)
	fmt.Fprintf(&b, "#SBATCH --time=%s\n", s.Time)
	if s.Device == "cuda" {
		fmt.Fprintf(&b, "#SBATCH --gres=gpu:1\n")
	}
	if s.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", s.Partition)
	}
	fmt.Fprintf(&b, "#SBATCH --signal=B:TERM@120\n")
	fmt.Fprintf(&b, "#SBATCH --open-mode=append\n")
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", sbatchQuote(filepath.Join(out, LogDir, "%A_%a.out")))
	args := []string{shellQuote(bin), "-cell", `"$SLURM_ARRAY_TASK_ID"`, "-out", shellQuote(out), "-workers", `"${SLURM_CPUS_PER_TASK:-1}"`}
	if dataDir != "" {
		args = append(args, "-data-dir", shellQuote(dataDir))
	}
	if s.Device == "cuda" {
		args = append(args, "-device", "cuda")
	}
	fmt.Fprintf(&b, "exec %s\n", strings.Join(args, " "))
	return b.String()
}

// sbatchQuote quotes s for an #SBATCH line, where sbatch reads double
// quotes and backslash escapes as a shell would, and an unquoted # starts
// a comment.
func sbatchQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// The flags written into the generated files: each is checked, so that
// none can add a line, a command or a key (docs/sweeps.md lists the
// character sets).
var (
	// sbatch --time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or
	// D-HH:MM:SS, or unlimited.
	slurmTime = regexp.MustCompile(`^(([0-9]+-)?[0-9]+(:[0-9]+){0,2}|UNLIMITED|INFINITE|unlimited|infinite)$`)
	// Partition names, comma-separated for a job that may run in any.
	slurmPartition = regexp.MustCompile(`^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$`)
	// The OCI image reference grammar (github.com/distribution/reference):
	// [domain[:port]/]path[:tag][@digest], the path lower case.
	ociDomain    = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?`
	ociPath      = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*`
	ociTag       = `[\w][\w.-]{0,127}`
	ociDigest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	ociReference = regexp.MustCompile(`^(?:` + ociDomain + `/)?` + ociPath + `(?::` + ociTag + `)?(?:@` + ociDigest + `)?$`)
)

// check refuses -slurm flags that sbatch or Kubernetes would not take, or
// that would change the generated files' structure.
func (s SlurmOptions) check() error {
	switch {
	case s.CPUs < 1:
		return fmt.Errorf("-slurm-cpus must be at least 1, got %d", s.CPUs)
	case !slurmTime.MatchString(s.Time):
		return fmt.Errorf("-slurm-time %q is not a time sbatch takes: minutes, HH:MM:SS, D-HH:MM:SS and the like", s.Time)
	case s.Partition != "" && !slurmPartition.MatchString(s.Partition):
		return fmt.Errorf("-slurm-partition %q: partition names are letters, digits, '_', '-' and '.', comma-separated", s.Partition)
	case len(s.Image) > 255 || !ociReference.MatchString(s.Image):
		return fmt.Errorf("-k8s-image %q is not an image reference such as registry.example.com/mtsgd:v1", s.Image)
	}
	_, err := k8sQuantity(s.Mem)
	return err
}

// scriptSafe refuses a value the script cannot hold: a control character
// would end its line (a newline starts a command), and '%' would be read
// as one of Slurm's file name patterns.
func scriptSafe(what, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s: %q is not valid UTF-8; choose another path", what, v)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || r == '%' {
			return fmt.Errorf("%s: %q holds %q, which a Slurm script cannot hold; choose another path", what, v, r)
		}
	}
	return nil
}

// shellQuote quotes s for bash.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// k8sJob is a Kubernetes Indexed Job over the plan: pod I runs compare
// -cell I on a volume holding OUT, out's absolute path (the
// PersistentVolumeClaim named after it, k8sSweepName, mounted at
// /sweep). With -device cuda each pod runs its cell there and asks for
// one NVIDIA GPU (the device plugin's nvidia.com/gpu resource).
func k8sJob(p plan.Plan, s SlurmOptions, out string) (string, error) {
	mem, err := k8sQuantity(s.Mem)
	if err != nil {
		return "", err
	}
	device, gpu := "", ""
	if s.Device == "cuda" {
		device, gpu = `, "-device", "cuda"`, "\n              nvidia.com/gpu: 1"
	}
	jobName := k8sSweepName(p.Dataset, out)
	var b strings.Builder
	fmt.Fprintf(&b, `# A Kubernetes Indexed Job over the %d cells of the plan, written by
# compare -slurm: pod I runs compare -cell I (JOB_COMPLETION_INDEX) on the
# sweep's directory, the PersistentVolumeClaim %s mounted at /sweep, which
# must hold plan.json. Apply with kubectl apply -f %s; then run
# compare -aggregate -out on that volume (docs/sweeps.md).
apiVersion: batch/v1
kind: Job
metadata:
  name: %s
spec:
  completionMode: Indexed
  completions: %d
  parallelism: %d
  backoffLimit: %d
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: cell
          image: %q
          command: ["compare"]
          args: ["-cell", "$(JOB_COMPLETION_INDEX)", "-out", "/sweep", "-workers", "%d"%s]
          resources:
            requests:
              cpu: "%d"
              memory: %s
            limits:
              memory: %s%s
          volumeMounts:
            - name: sweep
              mountPath: /sweep
      volumes:
        - name: sweep
          persistentVolumeClaim:
            claimName: %s
`, len(p.Cells), jobName, JobFile, jobName, len(p.Cells), len(p.Cells), 2*len(p.Cells), s.Image, s.CPUs, device, s.CPUs, mem, mem, gpu, jobName)
	return b.String(), nil
}

// k8sQuantity turns an sbatch --mem size (a number of megabytes, or one
// with the suffix K, M, G or T) into a Kubernetes quantity.
func k8sQuantity(mem string) (string, error) {
	n, unit := mem, "M"
	if i := strings.IndexAny(mem, "KMGTkmgt"); i >= 0 && i == len(mem)-1 {
		n, unit = mem[:i], strings.ToUpper(mem[i:])
	}
	if v, err := strconv.ParseUint(n, 10, 64); err != nil || v == 0 {
		return "", fmt.Errorf("-slurm-mem %q is not a size such as 4G or 4000M", mem)
	}
	return n + unit + "i", nil
}

// k8sSweepName is the name of the Job and the claim of the sweep in
// out, an absolute path: the data set and out's folder as far as they
// make a name (k8sName), and the first 8 hex digits of the SHA-256 of
// out, so that two sweeps' names differ even where their folders' names
// reduce to the same (a b, a#b, ü) and neither reuses the other's volume
// and plan.
func k8sSweepName(dataset, out string) string {
	sum := sha256.Sum256([]byte(out))
	suffix := "-" + hex.EncodeToString(sum[:4])
	name := k8sName("compare-" + dataset + "-" + filepath.Base(out))
	if len(name) > 52-len(suffix) {
		name = strings.TrimRight(name[:52-len(suffix)], "-")
	}
	return name + suffix
}

// k8sName makes s a valid Kubernetes object name: lower case letters,
// digits and '-', at most 63 characters (room left for the pods'
// suffixes), starting and ending with an alphanumeric.
func k8sName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	s = strings.Trim(string(b), "-")
	if len(s) > 52 {
		s = strings.TrimRight(s[:52], "-")
	}
	return s
}
