package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// train -resume refuses, with status 1 and naming what differs, a last/
// that is not the run's own: another seed's, another data set's, or one
// whose history is not the run's; best/ and metrics.jsonl are left as
// they were. A copy of the run's best/ (the documented recovery of a
// damaged last/) resumes.
func TestResumeForeignLast(t *testing.T) {
	captureLog(t)
	data, other := t.TempDir(), t.TempDir()
	writeLabelled(t, data, "npz", 60, false)
	writeLabelled(t, other, "npz", 60, true)
	common := []string{"-hidden", "8", "-particles", "2", "-batch", "16"}
	run1, _ := trainFiles(t, append([]string{"-data", data, "-seed", "1", "-epochs", "2"}, common...)...)
	seed2, _ := trainFiles(t, append([]string{"-data", data, "-seed", "2", "-epochs", "1"}, common...)...)
	otherData, _ := trainFiles(t, append([]string{"-data", other, "-seed", "1", "-epochs", "1"}, common...)...)
	for _, tc := range []struct {
		name string
		last func(t *testing.T, runDir string) // replaces runDir/last
		want string                            // "" resumes
	}{
		{"another seed's", copyLast(seed2), "seed (2 in last/, 1 in best/)"},
		{"another data set's", copyLast(otherData), "files.sha256"},
		{"another history", func(t *testing.T, runDir string) {
			testenv.EditJSON(t, filepath.Join(runDir, "last", checkpoints.ManifestName), func(m map[string]any) {
				testenv.SetJSON(m, 0.125, "metrics", "history", 0, "accuracy")
			})
		}, "its scores of epoch 1 ("},
		{"a copy of best/", func(t *testing.T, runDir string) {
			os.RemoveAll(filepath.Join(runDir, "last"))
			testenv.CopyDir(t, filepath.Join(runDir, "best"), filepath.Join(runDir, "last"))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runDir := filepath.Join(t.TempDir(), "run")
			for _, sub := range []string{"last", "best"} {
				testenv.CopyDir(t, filepath.Join(run1, sub), filepath.Join(runDir, sub))
			}
			copyFile(t, filepath.Join(run1, "metrics.jsonl"), filepath.Join(runDir, "metrics.jsonl"))
			tc.last(t, runDir)
			bestBefore, _ := os.ReadFile(filepath.Join(runDir, "best", checkpoints.ManifestName))
			metricsBefore, _ := os.ReadFile(filepath.Join(runDir, "metrics.jsonl"))
			o, err := parseFlags([]string{"-resume", runDir, "-epochs", "3", "-progress=false", "-workers", "1"}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c, err := checkpoints.LoadManifest(filepath.Join(runDir, "last")); err != nil || c.Epoch != 3 {
					t.Errorf("resumed from a copy of best/: %v", err)
				}
				return
			}
			want := strings.ReplaceAll(tc.want, "RUN", runDir)
			if status := cli.Status(err); status != cli.ExitError || err == nil || !strings.Contains(err.Error(), want) ||
				!strings.Contains(err.Error(), filepath.Join(runDir, "last")+" is not this run's checkpoint") {
				t.Errorf("status %d, error %v; want %d and %q", status, err, cli.ExitError, want)
			}
			bestAfter, _ := os.ReadFile(filepath.Join(runDir, "best", checkpoints.ManifestName))
			metricsAfter, _ := os.ReadFile(filepath.Join(runDir, "metrics.jsonl"))
			if !bytes.Equal(bestBefore, bestAfter) || !bytes.Equal(metricsBefore, metricsAfter) {
				t.Error("refused, but best/ or metrics.jsonl changed")
			}
		})
	}
}

// copyLast replaces a run directory's last/ with from's.
func copyLast(from string) func(t *testing.T, runDir string) {
	return func(t *testing.T, runDir string) {
		os.RemoveAll(filepath.Join(runDir, "last"))
		testenv.CopyDir(t, filepath.Join(from, "last"), filepath.Join(runDir, "last"))
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// train -resume -epochs N on a run that has done more than N epochs is
// refused as the command line (status 2), saying so, and changes
// nothing; -epochs equal to those done resumes to no further epoch.
func TestResumeFewerEpochs(t *testing.T) {
	captureLog(t)
	data := t.TempDir()
	writeLabelled(t, data, "npz", 60, false)
	runDir, _ := trainFiles(t, "-data", data, "-hidden", "8", "-particles", "2", "-batch", "16", "-epochs", "2")
	before, _ := os.ReadFile(filepath.Join(runDir, "last", checkpoints.ManifestName))
	o, err := parseFlags([]string{"-resume", runDir, "-epochs", "1", "-progress=false", "-workers", "1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), o)
	if cli.Status(err) != cli.ExitUsage || !strings.Contains(err.Error(), "-epochs 1 with -resume: "+runDir+" has done 2 epochs already") {
		t.Errorf("status %d, error %v", cli.Status(err), err)
	}
	if after, _ := os.ReadFile(filepath.Join(runDir, "last", checkpoints.ManifestName)); !bytes.Equal(before, after) {
		t.Error("refused, but last/ changed")
	}
}

// -checkpoint-every is the run's: the checkpoint records it, and
// train -resume without the flag keeps it (the resumed run's checkpoint
// records it still); -checkpoint-every 0 on -resume turns it off.
func TestResumeKeepsCheckpointEvery(t *testing.T) {
	captureLog(t)
	data := t.TempDir()
	writeLabelled(t, data, "npz", 60, false)
	runDir, _ := trainFiles(t, "-data", data, "-hidden", "8", "-particles", "2", "-batch", "16", "-epochs", "1", "-checkpoint-every", "2")
	every := func() any {
		t.Helper()
		c, err := checkpoints.LoadManifest(filepath.Join(runDir, "last"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(c.Metrics, &m); err != nil {
			t.Fatal(err)
		}
		return m["checkpoint_every"]
	}
	if got := every(); got != 2.0 {
		t.Fatalf("the run's checkpoint records checkpoint_every %v, want 2", got)
	}
	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"-epochs", "2"}, 2.0},
		{[]string{"-epochs", "3", "-checkpoint-every", "0"}, nil},
	} {
		o, err := parseFlags(append([]string{"-resume", runDir, "-progress=false", "-workers", "1"}, tc.args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if got := every(); got != tc.want {
			t.Errorf("%q: checkpoint_every %v after the resume, want %v", tc.args, got, tc.want)
		}
	}
}
