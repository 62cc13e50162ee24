package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fuzzPlan is the plan FuzzCheckReplace writes over: two methods, two
// seeds, one epoch.
func fuzzPlan() Plan {
	return New(Comparison{Dataset: "multi-mnist", Methods: []string{"linear", "single"}, Seeds: []uint64{1, 2}, Epochs: 1, Particles: 2})
}

// Whatever plan.json an -out holds, CheckReplace with another plan
// either refuses it, naming plan.json, or it reads as a plan whose cells
// begin the replacing plan's: the finished runs of another comparison are
// never taken over.
func FuzzCheckReplace(f *testing.F) {
	p := fuzzPlan()
	dir := f.TempDir()
	if err := Write(dir, p); err != nil {
		f.Fatal(err)
	}
	same, err := os.ReadFile(filepath.Join(dir, PlanFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(same)
	f.Add(bytes.Replace(same, []byte(`"epochs": 1`), []byte(`"epochs": 2`), 1))
	f.Add(bytes.Replace(same, []byte(`"seeds": [`), []byte(`"seeds": [3, `), 1))
	f.Add(same[:len(same)/2])
	shorter := New(Comparison{Dataset: "multi-mnist", Methods: []string{"linear", "single"}, Seeds: []uint64{1}, Epochs: 1, Particles: 2})
	if err := Write(dir, shorter); err != nil {
		f.Fatal(err)
	}
	prefix, _ := os.ReadFile(filepath.Join(dir, PlanFile))
	f.Add(prefix)
	f.Fuzz(func(t *testing.T, b []byte) {
		out := t.TempDir()
		if err := os.WriteFile(filepath.Join(out, PlanFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		err := CheckReplace(out, p)
		if err != nil {
			if !strings.Contains(err.Error(), PlanFile) {
				t.Fatalf("a refusal that does not name %s: %v", PlanFile, err)
			}
			return
		}
		old, err := Read(out)
		if err != nil {
			t.Fatalf("accepted a plan.json that does not read: %v\n%s", err, b)
		}
		if len(old.Cells) > len(p.Cells) || !slices.EqualFunc(old.Cells, p.Cells[:len(old.Cells)], Cell.Equal) {
			t.Fatalf("accepted another comparison's plan:\n%s", b)
		}
	})
}
