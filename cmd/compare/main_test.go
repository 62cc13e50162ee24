package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// The default method list comes from the method registry: every
// compared method in the registry's order, a method that takes MT-SGD's
// presets once per preset with the default first; compare -h prints it,
// and the tuned protocol's list is the same with the default preset
// alone.
func TestDefaultMethods(t *testing.T) {
	var names, tuned []string // the default list's method names, each once
	presets := map[string][]string{}
	for _, spec := range DefaultMethods() {
		name, preset, _ := strings.Cut(spec, ":")
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		if preset == "" || preset == experiment.DefaultPreset {
			tuned = append(tuned, spec)
		}
		if preset != "" {
			presets[name] = append(presets[name], preset)
		}
	}
	if want := experiment.MethodNames(func(m experiment.Method) bool { return m.Compared }); !slices.Equal(names, want) {
		t.Errorf("default methods %v, want the compared ones %v", names, want)
	}
	for _, name := range names {
		m, err := experiment.LookupMethod(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := presets[name]; m.Presets != (len(got) == len(experiment.Presets)) || m.Presets && got[0] != experiment.DefaultPreset {
			t.Errorf("%s (presets %v) in presets %v, want every preset, the default first, or none", name, m.Presets, got)
		}
	}
	if want := "mtsgd:" + experiment.DefaultPreset; DefaultMethods()[0] != want {
		t.Errorf("first default method %s, want %s", DefaultMethods()[0], want)
	}
	if !slices.Equal(tunedMethods, tuned) {
		t.Errorf("the tuned protocol's methods %v, want %v", tunedMethods, tuned)
	}
	var help bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if want := strings.Join(DefaultMethods(), ","); !strings.Contains(help.String(), want) {
		t.Errorf("compare -h does not print the default methods %s:\n%s", want, help.String())
	}
}
