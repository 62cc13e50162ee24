package plan

import (
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/experiment"
)

// A spec's own options reach the run's settings and its directory's
// name; options a method does not take are refused, naming the spec.
func TestSpecOptions(t *testing.T) {
	for _, c := range []struct {
		spec, dir string
		repel     bool
		params    map[string]float64
	}{
		{"cagrad@c=0.2@repel", "cagrad-c0.2-repel-seed1", true, map[string]float64{"c": 0.2}},
		{"pcgrad@repel", "pcgrad-repel-seed1", true, nil},
		{"gradnorm@alpha=1@weight-lr=0.01@lr=0.1", "gradnorm-alpha1-weight-lr0.01-lr0.1-seed1", false, map[string]float64{"alpha": 1, "weight-lr": 0.01}},
		{"linear@lr=0.1", "linear-lr0.1-seed1", false, nil},
		{"moo-svgd@lr=0.01@scale=normalized", "moo-svgd-lr0.01-normalized-seed1", false, nil},
	} {
		m, err := parseSpec(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		var s experiment.Settings
		m.apply(&s)
		if s.Repel != c.repel || len(s.MethodParams) != len(c.params) {
			t.Errorf("%s: repel %v, parameters %v", c.spec, s.Repel, s.MethodParams)
		}
		for k, v := range c.params {
			if s.MethodParams[k] != v {
				t.Errorf("%s: parameter %s = %v, want %v", c.spec, k, s.MethodParams[k], v)
			}
		}
		if got := runDir(c.spec, 1); got != c.dir {
			t.Errorf("%s: directory %s, want %s", c.spec, got, c.dir)
		}
	}
	for _, bad := range []string{"mtsgd@repel", "moo-svgd@repel", "single@repel", "pcgrad@c=1", "cagrad@c=-1",
		"cagrad@c=x", "cagrad@c=0.1@c=0.2", "pcgrad@repel@repel"} {
		if _, err := parseSpec(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error %v, want one naming the spec", bad, err)
		}
	}
}
