package main

import (
	"regexp"
	"strings"
	"testing"
)

// The Kubernetes Job and claim of sweeps in different -out paths have
// different names, even where the folders' names reduce to the same
// characters (a b, a#b, a\b, a}b{) or to none (ü, -, _); each is a
// DNS-1123 label of at most 52 characters (room for the pods' suffixes),
// and the same path always gives the same name.
func TestK8sSweepNamesUnique(t *testing.T) {
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	seen := map[string]string{}
	for _, folder := range []string{"a b", "a#b", `a\b`, "a}b{", "ü", "-", "_", "sweep", strings.Repeat("long-", 30)} {
		for _, parent := range []string{"/runs/", "/other/runs/"} {
			out := parent + folder
			name := k8sSweepName("multi-mnist", out)
			if !label.MatchString(name) || len(name) > 52 {
				t.Errorf("-out %q: name %q is not a DNS-1123 label of at most 52 characters", out, name)
			}
			if !strings.HasPrefix(name, "compare-multi-mnist") {
				t.Errorf("-out %q: name %q does not start with compare-multi-mnist", out, name)
			}
			if other, ok := seen[name]; ok {
				t.Errorf("-out %q and %q share the name %s", out, other, name)
			}
			seen[name] = out
			if again := k8sSweepName("multi-mnist", out); again != name {
				t.Errorf("-out %q: %s, then %s", out, name, again)
			}
		}
	}
}
