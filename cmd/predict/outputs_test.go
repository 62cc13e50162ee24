package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/data/files"
)

// names lists dir's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range entries {
		ns = append(ns, e.Name())
	}
	return ns
}

// An output that would overwrite input is refused before anything is
// computed, status 2, and the input is left as it was: the -data file
// under its own name or another (a hard link, a symlink), the run's
// training files, and any new file beside them in the checkpoint's data
// directory. A directory, a missing directory and two outputs that are
// one file are refused the same way.
func TestOutputsNeverDestroyInput(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	dataDir, runDir := trained(t)
	tmp := t.TempDir()
	npzIn := filepath.Join(tmp, "new.npz")
	writeSet(t, npzIn, 2000, 9)
	csvIn := filepath.Join(tmp, "new.csv")
	var b strings.Builder
	b.WriteString("f0,f1,f2,f3,f4\n")
	for i := range 9 {
		x, _ := example(3000 + i)
		b.WriteString(f32(x[0]) + "," + f32(x[1]) + "," + f32(x[2]) + "," + f32(x[3]) + "," + f32(x[4]) + "\n")
	}
	if err := os.WriteFile(csvIn, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "link.csv")
	if err := os.Link(csvIn, link); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(tmp, "sym.npz")
	if err := os.Symlink(npzIn, sym); err != nil {
		t.Fatal(err)
	}
	train := filepath.Join(dataDir, files.TrainFile)
	inputs := []string{npzIn, csvIn, train, filepath.Join(dataDir, files.TestFile)}
	before := map[string][]byte{}
	for _, p := range inputs {
		c, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = c
	}
	for _, tc := range []struct {
		name string
		data string
		outs []string // -out, or -show for a .png
		want string
	}{
		{"csv onto itself", csvIn, []string{csvIn}, "the -data file"},
		{"npz onto itself", npzIn, []string{npzIn}, "the -data file"},
		{"npz onto itself as the second output", npzIn, []string{filepath.Join(tmp, "p.csv"), npzIn}, "the -data file"},
		{"csv onto a hard link of it", csvIn, []string{link}, "the -data file"},
		{"npz onto a symlink to it", npzIn, []string{sym}, "the -data file"},
		{"onto the training file", npzIn, []string{train}, "in the checkpoint's data directory"},
		{"a new file in the data directory", npzIn, []string{filepath.Join(dataDir, "pred.csv")}, "in the checkpoint's data directory"},
		{"the test file onto itself", filepath.Join(dataDir, files.TestFile), []string{filepath.Join(dataDir, files.TestFile)}, ""},
		{"-show in the data directory", npzIn, []string{filepath.Join(tmp, "p.csv"), filepath.Join(dataDir, "top.png")}, "-show"},
		{"a directory", npzIn, []string{filepath.Join(tmp, "dir.csv")}, "a directory"},
		{"a missing directory", npzIn, []string{filepath.Join(tmp, "p.csv"), filepath.Join(tmp, "missing", "p.npz")}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Mkdir(filepath.Join(tmp, "dir.csv"), 0o755)
			args := []string{"-ckpt", runDir, "-data", tc.data, "-progress=false"}
			for _, out := range tc.outs {
				if filepath.Ext(out) == ".png" {
					args = append(args, "-show", out)
				} else {
					args = append(args, "-out", out)
				}
			}
			o, err := parseFlags(args, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			err = run(context.Background(), o)
			if status := cli.Status(err); status != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("status %d, error %v; want 2 and %q", status, err, tc.want)
			}
			for _, p := range inputs {
				if c, err := os.ReadFile(p); err != nil || !bytes.Equal(c, before[p]) {
					t.Errorf("%s changed (%v)", p, err)
				}
			}
			for _, out := range tc.outs {
				if _, ok := before[out]; !ok && out != link && out != sym {
					if _, err := os.Stat(out); err == nil && !strings.HasSuffix(out, "dir.csv") {
						t.Errorf("%s written", out)
					}
				}
			}
			if ns := names(t, dataDir); !slices.Equal(ns, []string{files.TasksFile, files.TestFile, files.TrainFile}) {
				t.Errorf("data directory holds %v", ns)
			}
		})
	}
}

// The outputs are written all or none: when writing the second fails,
// or SIGINT or SIGTERM arrives once the first is written, neither is put
// in place and no temporary file is left; an interruption is status 3.
func TestOutputsAllOrNothing(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	dataDir, runDir := trained(t)
	defer func() { prepared = func(string) {} }()
	for _, tc := range []struct {
		name   string
		then   func(a, b string, cancel func()) // after the first output is written
		status int
	}{
		{"second output fails", func(a, b string, cancel func()) { os.RemoveAll(filepath.Dir(b)) }, 1},
		{"signal after the first", func(a, b string, cancel func()) { cancel() }, 3},
		{"none", func(a, b string, cancel func()) {}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirA, dirB := t.TempDir(), filepath.Join(t.TempDir(), "b")
			if err := os.Mkdir(dirB, 0o755); err != nil {
				t.Fatal(err)
			}
			a, b := filepath.Join(dirA, "p.csv"), filepath.Join(dirB, "p.npz")
			o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dataDir, files.TestFile), "-out", a, "-out", b, "-progress=false"}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first := true
			prepared = func(string) {
				if first {
					first = false
					tc.then(a, b, cancel)
				}
			}
			err = run(ctx, o)
			if status := cli.Status(err); status != tc.status {
				t.Fatalf("status %d (%v), want %d", status, err, tc.status)
			}
			want := []string{"p.csv"}
			if tc.status != 0 {
				want = nil
			}
			if ns := names(t, dirA); !slices.Equal(ns, want) {
				t.Errorf("%s holds %v, want %v", dirA, ns, want)
			}
			if tc.status == 3 {
				if ns := names(t, dirB); len(ns) != 0 {
					t.Errorf("%s holds %v after an interruption", dirB, ns)
				}
			}
		})
	}
}
