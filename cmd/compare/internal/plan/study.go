package plan

import (
	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
	"github.com/mtsgd/mtsgd/experiment"
)

// A study is a comparison whose runs are listed one by one, each method
// spec with its own seeds, rather than every method for every seed; its
// finished runs are also assessed (Comparison.Assess, study.Assess): the
// checkpoints last/ and best/ are scored on the test split raw and after
// temperature scaling, and against another data set's inputs, into the
// result file.

// Run is one run of a study.
type Run struct {
	Method string `json:"method"`
	Seed   uint64 `json:"seed"`
	// Tasks, if set, replaces the protocol's tasks for this run (-tasks):
	// one attribute for a single-task run.
	Tasks string `json:"tasks,omitempty"`
}

// PaperStudy are -protocol paper-study's runs: the paper's protocol (100
// epochs of SGD at the data set's rate, halved every 15 epochs) run to
// its end, every seed-1 run first so that a first reading exists early:
//
//   - at the paper's rate: MT-SGD (authors-params), linear scalarisation
//     with equal weights and with per-particle preferences (linear-pref),
//     MGDA, Pareto MTL and MOO-SVGD with normalised scores (the scale the
//     tuned search chose for it; with batch-mean scores it stays on a
//     plateau at lr 1e-3);
//   - at each method's tuned rate on Multi-MNIST
//     (docs/results/tuned-multi-mnist): MT-SGD 0.01, linear 0.1 and
//     MOO-SVGD 0.01 with normalised scores;
//   - seeds 2 and 3 of MT-SGD, linear and MOO-SVGD at the paper's rate,
//     and of linear-pref: its seed-1 ECE at epoch 100 (12.8 / 11.1 %)
//     differs from equal-weight linear's (1.7 / 2.1 %) by more than the
//     2 points beyond which the study needs its spread too;
//   - seeds 2 and 3 of the three tuned-rate runs, so that the reading at
//     each method's own rate has its spread as the paper's rate has;
//   - seed 1 of the field's methods, each at the rate the tuned search of
//     docs/results/tuned-field-multi-mnist chose for it (validation NLL
//     after 2 epochs: PCGrad, uncertainty weighting, GradNorm and DWA
//     0.03; CAGrad, Nash-MTL, IMTL-G, Aligned-MTL, UPGrad, RLW and FAMO
//     0.1), and of single-task training at tuned-multi-mnist's rate for
//     it (0.1), Δm's baseline.
var PaperStudy = []Run{
	{"mtsgd:authors-params", 1, ""}, {"linear", 1, ""}, {"linear-pref", 1, ""}, {"mgda", 1, ""}, {"pareto-mtl", 1, ""},
	{"moo-svgd@scale=normalized", 1, ""},
	{"mtsgd:authors-params@lr=0.01", 1, ""}, {"linear@lr=0.1", 1, ""}, {"moo-svgd@lr=0.01@scale=normalized", 1, ""},
	{"mtsgd:authors-params", 2, ""}, {"linear", 2, ""}, {"moo-svgd@scale=normalized", 2, ""}, {"linear-pref", 2, ""},
	{"mtsgd:authors-params", 3, ""}, {"linear", 3, ""}, {"moo-svgd@scale=normalized", 3, ""}, {"linear-pref", 3, ""},
	{"linear@lr=0.1", 2, ""}, {"mtsgd:authors-params@lr=0.01", 2, ""}, {"moo-svgd@lr=0.01@scale=normalized", 2, ""},
	{"linear@lr=0.1", 3, ""}, {"mtsgd:authors-params@lr=0.01", 3, ""}, {"moo-svgd@lr=0.01@scale=normalized", 3, ""},
	{"single@lr=0.1", 1, ""}, {"pcgrad@lr=0.03", 1, ""}, {"cagrad@lr=0.1", 1, ""},
	{"nash-mtl@lr=0.1", 1, ""}, {"imtl-g@lr=0.1", 1, ""}, {"aligned-mtl@lr=0.1", 1, ""}, {"upgrad@lr=0.1", 1, ""},
	{"uw@lr=0.03", 1, ""}, {"gradnorm@lr=0.03", 1, ""}, {"dwa@lr=0.03", 1, ""},
	{"rlw@lr=0.1", 1, ""}, {"famo@lr=0.1", 1, ""},
}

// writeStudy writes the study of plan p: its tables, the READMEs' share
// of them and its charts (study.WriteStudy), with note (the missing
// cells) below the tables.
func writeStudy(out string, p Plan, runs map[string][]study.Run, histories map[string][][]experiment.MetricsLine, note string) error {
	s := study.Study{Dataset: p.Dataset, Epochs: p.Epochs, LR: p.LR}
	if s.LR == 0 {
		s.LR = experiment.Defaults(p.Dataset).LR
	}
	for _, m := range p.Methods {
		spec := mustSpec(m)
		s.Methods = append(s.Methods, study.Method{Spec: m, Name: spec.Name, Preset: spec.Preset, LR: spec.LR})
	}
	return study.WriteStudy(out, s, runs, histories, note)
}
