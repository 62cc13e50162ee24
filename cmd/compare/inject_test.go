package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/plan"
)

// sweepFiles writes the -slurm files of a tiny plan with extra flags into
// a new directory (or the -out given) and returns the script and the job,
// or the flags' error.
func sweepFiles(t *testing.T, extra ...string) (script, job string, err error) {
	t.Helper()
	args := append([]string{"-dataset", "multi-mnist", "-methods", "linear", "-epochs", "1", "-slurm"}, extra...)
	if !strings.Contains(strings.Join(extra, " "), "-out") {
		args = append(args, "-out", t.TempDir())
	}
	o, err := parseFlags(args, &bytes.Buffer{})
	if err != nil {
		return "", "", err
	}
	if err := dispatch(context.Background(), o, &bytes.Buffer{}); err != nil {
		return "", "", err
	}
	s, err := os.ReadFile(filepath.Join(o.Out, plan.SbatchFile))
	if err != nil {
		t.Fatal(err)
	}
	j, err := os.ReadFile(filepath.Join(o.Out, JobFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(s), string(j), nil
}

// yamlJSON parses a YAML document with PyYAML and returns it as JSON.
func yamlJSON(t *testing.T, doc string) map[string]any {
	t.Helper()
	cmd := exec.Command("python3", "-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))")
	cmd.Stdin = strings.NewReader(doc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("YAML parser: %v\n%s", err, doc)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// No value written into sweep.sbatch or sweep-job.yaml changes their
// structure: a newline (or any control character) in -out, -slurm-time,
// -slurm-partition or -k8s-image is refused with the flags (status 2),
// as are values sbatch or Kubernetes would not take; the paths that are
// accepted, with spaces, quotes, '#', '$' and backquotes, are quoted, so
// the script has the same lines, passes bash -n and sends the logs to the
// path given, and the job parses to the same keys with the image given.
func TestSweepFilesHostileInputs(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if exec.Command("python3", "-c", "import yaml").Run() != nil {
		if os.Getenv("MTSGD_SLURM_TEST") != "" {
			t.Fatal("python3 with PyYAML (Debian's python3-yaml) is needed")
		}
		t.Skip("no python3 with PyYAML")
	}
	good := []string{"-slurm-partition", "a.b_c-d,e", "-slurm-time", "2-03:04:05",
		"-k8s-image", "registry.example.com:5000/team/mtsgd_x:v1.2-rc@sha256:0123456789abcdef0123456789abcdef"}
	baseScript, baseJob, err := sweepFiles(t, good...)
	if err != nil {
		t.Fatal(err)
	}
	baseKeys := keys(yamlJSON(t, baseJob), "")
	lines := strings.Count(baseScript, "\n")

	for _, bad := range [][]string{
		{"-out", "/tmp/s\ntouch /tmp/PWNED\n#"},
		{"-out", "/tmp/s\rx"},
		{"-out", "/tmp/100%done"},
		{"-slurm-time", "1:00:00\ntouch /tmp/PWNED"},
		{"-slurm-time", "1 hour"},
		{"-slurm-partition", "short\ntouch /tmp/PWNED"},
		{"-slurm-partition", "short --uid=0"},
		{"-k8s-image", "mtsgd:latest\n          securityContext: {privileged: true}"},
		{"-k8s-image", "Mtsgd:latest"},
		{"-k8s-image", "mtsgd latest"},
		{"-slurm-cpus", "0"},
		{"-slurm-mem", "x"},
	} {
		if _, _, err := sweepFiles(t, bad...); err == nil {
			t.Errorf("%q accepted", bad)
		} else if _, perr := parseFlags(append([]string{"-dataset", "multi-mnist", "-slurm", "-out", t.TempDir()}, bad...), &bytes.Buffer{}); perr == nil {
			t.Errorf("%q refused only after the flags (status 1, not 2): %v", bad, err)
		}
	}

	for _, name := range []string{"with space", `quote"s and 'single'`, "hash # $HOME `id` \\back", "-dash"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name)
			script, job, err := sweepFiles(t, append([]string{"-out", out}, good...)...)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(script, "\n"); n != lines {
				t.Errorf("script has %d lines, %d without the hostile value:\n%s", n, lines, script)
			}
			if msg, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v: %s\n%s", err, msg, script)
			}
			// The log path as sbatch reads it (sbatchUnquote), and the
			// arguments compare gets, as bash passes them.
			for _, l := range strings.Split(script, "\n") {
				if v, ok := strings.CutPrefix(l, "#SBATCH --output="); ok && sbatchUnquote(v) != filepath.Join(out, LogDir, "%A_%a.out") {
					t.Errorf("--output reads as %q, want under %s", sbatchUnquote(v), out)
				}
			}
			args, err := exec.Command("bash", "-c", `args() { printf '%s\n' "$@"; }; SLURM_ARRAY_TASK_ID=0; `+
				strings.Replace(lastLine(script), "exec ", "args ", 1)).Output()
			if err != nil || !strings.Contains(string(args), "\n-out\n"+out+"\n") {
				t.Errorf("compare gets %q (%v), want -out %s", args, err, out)
			}
			v := yamlJSON(t, job)
			if got := keys(v, ""); strings.Join(got, " ") != strings.Join(baseKeys, " ") {
				t.Errorf("job keys %v, want %v", got, baseKeys)
			}
			if !strings.Contains(job, `image: "registry.example.com:5000/team/mtsgd_x:v1.2-rc@sha256:0123456789abcdef0123456789abcdef"`) {
				t.Errorf("job's image:\n%s", job)
			}
		})
	}
}

// sbatchUnquote reads an #SBATCH argument as sbatch does: within double
// quotes a backslash makes the next character literal.
func sbatchUnquote(v string) string {
	if !strings.HasPrefix(v, `"`) || !strings.HasSuffix(v, `"`) {
		return v
	}
	v = v[1 : len(v)-1]
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return ls[len(ls)-1]
}

// keys lists the paths of every key in v, depth first.
func keys(v any, prefix string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out = append(out, prefix+"."+k)
			out = append(out, keys(e, prefix+"."+k)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, keys(e, prefix+"[]")...)
		}
	}
	slices.Sort(out)
	return out
}
