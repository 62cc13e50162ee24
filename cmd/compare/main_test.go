package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// Two methods, two seeds on real Multi-MNIST (a few examples): the table
// has a row per method and task whose means are those of the runs'
// metrics; a second invocation trains nothing; a longer budget resumes.
func TestCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks on real data")
	}
	_, _, err := experiment.LoadData(experiment.Settings{Dataset: "multi-mnist", Seed: 1}, "")
	testenv.CheckData(t, err)
	out := t.TempDir()
	args := []string{"-dataset", "multi-mnist", "-methods", "linear,single", "-seeds", "1,2", "-epochs", "1", "-lr", "0.01",
		"-particles", "2", "-train-limit", "64", "-test-limit", "40", "-out", out}
	o, err := parseFlags(args, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "compare.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+2*2 || recs[1][0] != "linear" || recs[1][1] != "top-left" || recs[3][0] != "single" {
		t.Fatalf("compare.csv:\n%v", recs)
	}
	// The mean accuracy of linear/top-left is that of its two runs.
	var sum float64
	for _, seed := range []string{"1", "2"} {
		b, err := os.ReadFile(filepath.Join(out, "linear-seed"+seed, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var first string // epoch 1's first test line (validation lines come before it)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"split":"test"`) {
				first = l
				break
			}
		}
		i := strings.Index(first, `"accuracy":`) + len(`"accuracy":`)
		v, err := strconv.ParseFloat(first[i:i+strings.IndexAny(first[i:], ",}")], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v / 2
	}
	if got, _ := strconv.ParseFloat(recs[1][3], 64); math.Abs(got-sum) > 1e-5 {
		t.Errorf("linear top-left mean accuracy %v, runs' mean %v", got, sum)
	}
	if !strings.Contains(stdout.String(), "| linear | top-left |") {
		t.Errorf("table:\n%s", stdout.String())
	}

	manifest := filepath.Join(out, "single-seed2", "last", "manifest.json")
	before, _ := os.Stat(manifest)
	if err := run(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(manifest); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a finished run was trained again")
	}

	o.Epochs = 2
	if err := run(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "compare.csv")); !strings.Contains(string(b), "linear,top-left,2,") {
		t.Errorf("after extending:\n%s", b)
	}
	o.LR = 0.5
	if err := run(context.Background(), o, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "holds a run with other settings") {
		t.Errorf("other settings in the same directory: %v", err)
	}
}

// The default method list comes from the method registry, and the
// package documentation states it as it is: every compared method, MT-SGD
// once per preset with the default first.
func TestDefaultMethodsDocumented(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var documented string
	for _, line := range strings.Split(string(src), "\n") {
		if _, rest, ok := strings.Cut(line, "-methods LIST"); ok && strings.HasPrefix(line, "//") {
			_, documented, _ = strings.Cut(rest, "(default ")
			documented = strings.TrimSuffix(documented, ")")
		}
	}
	got := strings.Join(DefaultMethods(), ",")
	if documented != got {
		t.Errorf("documented default -methods %q, DefaultMethods %q", documented, got)
	}
	if want := "mtsgd:" + experiment.DefaultPreset; DefaultMethods()[0] != want {
		t.Errorf("first default method %s, want %s", DefaultMethods()[0], want)
	}
	if len(DefaultMethods()) != len(experiment.Presets)+5 {
		t.Errorf("%d default methods, want MT-SGD in %d presets and 5 baselines", len(DefaultMethods()), len(experiment.Presets))
	}
}
