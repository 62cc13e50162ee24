package main

import (
	"bytes"
	"context"
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

	"github.com/mtsgd/mtsgd/internal/atomicfile"
)

// The files -slurm writes in OUT, and the folder the array's logs go to.
const (
	SbatchFile = "sweep.sbatch"
	JobFile    = "sweep-job.yaml"
	LogDir     = "slurm"
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
		return fmt.Errorf("finding the compare binary for %s: %w", SbatchFile, err)
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
	job, err := k8sJob(p, o.Slurm, filepath.Base(out))
	if err != nil {
		return err
	}
	for _, f := range []struct{ name, text string }{{SbatchFile, script}, {JobFile, job}} {
		path, text := filepath.Join(out, f.name), f.text
		if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		fmt.Fprintln(stdout, "wrote", path)
	}
	sbatch := filepath.Join(out, SbatchFile)
	searchCells := 0
	for _, c := range p.Cells {
		if c.Stage == stageSearch {
			searchCells++
		}
	}
	if searchCells == 0 {
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
	// The final cells of the tuned protocol wait for the search: two
	// arrays, the second started once the first has ended.
	searchArray := fmt.Sprintf("--array=0-%d", searchCells-1)
	finalArray := fmt.Sprintf("--array=%d-%d", searchCells, len(p.Cells)-1)
	if !o.Slurm.Submit {
		fmt.Fprintf(stdout, "submit with: sbatch %s %s, then sbatch %s --dependency=afterany:JOBID %s\n", searchArray, sbatch, finalArray, sbatch)
		return nil
	}
	id, err := submit(ctx, sbatch, searchArray)
	if err != nil {
		return err
	}
	final, err := submit(ctx, sbatch, finalArray, "--dependency=afterany:"+id)
	if err != nil {
		return fmt.Errorf("the search is submitted as job %s: %w", id, err)
	}
	log.WithFields(log.Fields{"search": id, "final": final}).Infof("submitted; watch with squeue -j %s,%s, then compare -aggregate -out %s", id, final, o.Out)
	_, err = fmt.Fprintf(stdout, "%s\n%s\n", id, final)
	return err
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
func sbatchScript(p Plan, s SlurmOptions, bin, out, dataDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "# A Slurm job array over the %d cells of %s, written by compare -slurm:\n", len(p.Cells), filepath.Join(out, PlanFile))
	fmt.Fprintf(&b, "# task I runs compare -cell I. Rerun missing cells with sbatch --array=LIST %s,\n", filepath.Join(out, SbatchFile))
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
// -cell I on a volume holding OUT (the PersistentVolumeClaim named after
// OUT's folder, mounted at /sweep).
func k8sJob(p Plan, s SlurmOptions, name string) (string, error) {
	mem, err := k8sQuantity(s.Mem)
	if err != nil {
		return "", err
	}
	jobName := k8sName("compare-" + p.Dataset + "-" + name)
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
          args: ["-cell", "$(JOB_COMPLETION_INDEX)", "-out", "/sweep", "-workers", "%d"]
          resources:
            requests:
              cpu: "%d"
              memory: %s
            limits:
              memory: %s
          volumeMounts:
            - name: sweep
              mountPath: /sweep
      volumes:
        - name: sweep
          persistentVolumeClaim:
            claimName: %s
`, len(p.Cells), jobName, JobFile, jobName, len(p.Cells), len(p.Cells), 2*len(p.Cells), s.Image, s.CPUs, s.CPUs, mem, mem, jobName)
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
