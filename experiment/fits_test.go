package experiment

import (
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data/files"
)

// A method that cannot train the ensemble asked for is refused by the
// settings, before any data load: linear-pref with one particle, or on
// a data set of other than two tasks (SARCOS's 7, CelebA's -tasks, a
// tasks.json's); -preset, MT-SGD's choices, with a method that takes
// none of them.
func TestSettingsRefuseUnfitMethod(t *testing.T) {
	three := t.TempDir()
	if err := files.WriteDescription(three, files.Description{Tasks: []files.TaskSpec{
		{Name: "a", Kind: "regression"}, {Name: "b", Kind: "regression"}, {Name: "c", Kind: "regression"},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(s *Settings)
		want string // "" passes
	}{
		{"multi-mnist", func(s *Settings) { *s = Defaults("multi-mnist").ForMethod("linear-pref") }, ""},
		{"one particle", func(s *Settings) { *s = Defaults("multi-mnist").ForMethod("linear-pref"); s.Particles = 1 },
			"-method linear-pref with -particles 1 on multi-mnist (2 tasks): it spreads its particles over the trade-off of two tasks: it needs at least 2 particles, not 1"},
		{"sarcos", func(s *Settings) { *s = Defaults("sarcos").ForMethod("linear-pref") },
			"-method linear-pref with -particles 5 on sarcos (7 tasks): it weighs two tasks against each other: it needs exactly 2, not 7"},
		{"celeba 10", func(s *Settings) { *s = Defaults("celeba").ForMethod("linear-pref") }, "on celeba (10 tasks)"},
		{"celeba 2 named", func(s *Settings) { *s = Defaults("celeba").ForMethod("linear-pref"); s.Tasks = "Smiling,Male" }, ""},
		{"files of 3 tasks", func(s *Settings) {
			*s = Defaults(files.Name).ForMethod("linear-pref")
			s.Files = &files.Spec{Dir: three}
		}, "on files (3 tasks): it weighs two tasks against each other"},
		{"preset paper, linear", func(s *Settings) {
			*s = Defaults("multi-mnist").ForMethod("linear")
			p, _ := LookupPreset("paper")
			p.Apply(s)
		}, "-preset paper sets the choices of mtsgd; -method linear takes none of them"},
		{"preset paper, mtsgd", func(s *Settings) {
			*s = Defaults("multi-mnist")
			p, _ := LookupPreset("paper")
			p.Apply(s)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Settings
			tc.set(&s)
			err := s.Check()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
