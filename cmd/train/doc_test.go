package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
)

// registeredDatasets are the -dataset names of the registries without
// the one this package's tests register (registry_test.go): those the
// help and the README describe.
func registeredDatasets() []string {
	return slices.DeleteFunc(datasetNames(), func(n string) bool { return n == testDataset })
}

// The help text (doc.go) describes every data set -dataset takes, each
// once, and no other.
func TestDocListsDatasets(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "\n// Data sets:\n//\n")
	if !ok {
		t.Fatal(`doc.go has no "Data sets:" section`)
	}
	var documented []string
	for _, line := range strings.Split(section, "\n") {
		entry, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break // the section's end
		}
		if strings.HasPrefix(entry, " ") {
			continue // an entry's description goes on
		}
		// An entry's names lead it, separated by commas: "sarcos SARCOS
		// inverse…", "multi-mnist, multi-fashion, …".
		for _, f := range strings.Fields(entry) {
			name, more := strings.CutSuffix(f, ",")
			documented = append(documented, name)
			if !more {
				break
			}
		}
	}
	checkNames(t, "doc.go's data sets", documented, registeredDatasets())
}

// The README's table of data sets names every data set -dataset takes,
// once, and no other; the README names no method or model by list
// (train -h lists them).
func TestReadmeListsDatasets(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "\n| `-dataset` |")
	if !ok {
		t.Fatal("README.md has no table of -dataset names")
	}
	var documented []string
	for _, line := range strings.Split(table, "\n")[2:] { // past the header's end and its rule
		if !strings.HasPrefix(line, "| ") {
			break
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		parts := strings.Split(first, "`")
		for i := 1; i < len(parts); i += 2 { // the quoted names, not `-data DIR`
			if !strings.HasPrefix(parts[i], "-") {
				documented = append(documented, parts[i])
			}
		}
	}
	checkNames(t, "README.md's data sets", documented, registeredDatasets())
}

// train -h lists every registered method with its help line and every
// model; the help's -dataset line every data set.
func TestHelpListsRegistered(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	// The words alone: the help pads the names to a column.
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var want []string
	for _, m := range experiment.Methods() {
		want = append(want, m.Name+" "+m.Help)
	}
	want = append(want, strings.Join(experiment.ModelNames(), ", "), strings.Join(datasetNames(), ", ")+"; required")
	for _, w := range want {
		if !strings.Contains(words(help.String()), words(w)) {
			t.Errorf("help lacks %q:\n%s", w, help.String())
		}
	}
}

// checkNames fails t unless documented holds each of registered once and
// nothing else.
func checkNames(t *testing.T, what string, documented, registered []string) {
	t.Helper()
	seen := map[string]int{}
	for _, n := range documented {
		seen[n]++
	}
	for _, n := range registered {
		if seen[n] != 1 {
			t.Errorf("%s: %s named %d times, want once", what, n, seen[n])
		}
		delete(seen, n)
	}
	for n := range seen {
		t.Errorf("%s: %s is not registered", what, n)
	}
}
