package engine

import (
	"fmt"

	"github.com/mtsgd/mtsgd/particles"
)

// Update says how an ensemble's parameters move at each step.
type Update struct {
	// Trunk moves the particles' trunks α, with one score per task
	// (mtsgd in the paper).
	Trunk particles.Rule
	// Head moves task j's heads βʲ, with that task's score alone
	// (svgd in the paper).
	Head particles.Rule
	// Scale says how the scores are scaled before the rules see them.
	Scale ScoreScale
	// Examples is N, the size of the training set, used by ScoreSum.
	Examples int
	// Kernel says what the kernel rules' kernels compare. With
	// KernelParams (the zero value) the rules use their own kernels over
	// the parameters; with KernelOutputs the ensemble evaluates
	// OutputKernel on the networks' features and outputs and hands the
	// rules that kernel (particles.Ensemble.Kernel).
	Kernel       KernelSpace
	OutputKernel particles.RBF
	// HeadsFirst moves the heads first and then takes the trunks' task
	// gradients through the moved heads, as the authors' code does (one
	// more gradient evaluation per particle and step); otherwise one
	// evaluation moves both, as the paper's Algorithm 2 reads.
	HeadsFirst bool
}

// ScoreScale is how a network's scores, minus the gradients of the
// batch-mean task losses, are scaled before the update rules see them.
type ScoreScale int

const (
	// ScoreMean keeps the gradient of the batch-mean loss: the score of
	// the posterior tempered by N, exp(−(1/N) Σ_n ℓ_n). Scores and the
	// kernel's repulsion then compare as in SVGD on that tempered
	// target.
	ScoreMean ScoreScale = iota
	// ScoreSum multiplies trunk and head scores by N: the score of the
	// paper's posterior exp(−Σ_n ℓ_n), estimated on the batch.
	ScoreSum
	// ScoreNormalized divides each task's trunk scores, coordinate by
	// coordinate, by their L2 norm over the particles (the authors'
	// "--normalize": F.normalize of the M×d score matrix along the
	// particles, with the same floor of 1e-12 on the norm). Heads keep
	// the batch-mean scale, as there.
	ScoreNormalized
)

// ScoreScales names the scales, in the order of their values.
var ScoreScales = []string{"mean", "sum", "normalized"}

// ParseScoreScale returns the scale called name ("" is mean).
func ParseScoreScale(name string) (ScoreScale, error) {
	if name == "" {
		return ScoreMean, nil
	}
	for i, n := range ScoreScales {
		if n == name {
			return ScoreScale(i), nil
		}
	}
	return 0, fmt.Errorf("score scale %q is not one of %v", name, ScoreScales)
}

func (s ScoreScale) String() string {
	if int(s) < len(ScoreScales) {
		return ScoreScales[s]
	}
	return fmt.Sprintf("ScoreScale(%d)", int(s))
}

// scale applies u's score scale to the step's trunk scores, or to its
// head scores if heads. The trunk scores are not rewritten: the rules
// scale them as they read them (particles.Ensemble.Factor and
// Normalize), in float64 whether they are held in float32 or float64.
// The heads' float64 scores are scaled in place.
func (tr *Trainer) scale(u Update, heads bool) error {
	ts := &tr.trunkScores
	if !heads {
		ts.factor, ts.normalize = 0, false
	}
	switch u.Scale {
	case ScoreMean:
	case ScoreSum:
		if u.Examples < 1 {
			return fmt.Errorf("engine: score scale sum needs the training set's size, got %d", u.Examples)
		}
		n := float64(u.Examples)
		if !heads {
			ts.factor = n
			break
		}
		for _, task := range tr.headScores {
			for _, v := range task {
				for i := range v {
					v[i] *= n
				}
			}
		}
	case ScoreNormalized:
		ts.normalize = !heads
	default:
		return fmt.Errorf("engine: unknown score scale %v", u.Scale)
	}
	return nil
}

// trunkScores holds a step's trunk scores [task][particle]: K·M vectors
// of the trunk's length, a step's largest buffer (4.5 GB for 5 ResNet-18
// particles and 10 tasks in float64). Graphs that compute in float32 on
// the CPU write them in float32 (f32), which halves that and loses
// nothing, as their gradients hold no more; otherwise they are float64
// (f64). The rules read them into float64 and apply the step's scale,
// factor or normalize, as they read them.
type trunkScores struct {
	f64       [][][]float64
	f32       [][][]float32
	factor    float64
	normalize bool
}

func newTrunkScores(cfg *Config, k int) trunkScores {
	if cfg.ScoreSize() == 4 {
		return trunkScores{f32: make([][][]float32, k)}
	}
	return trunkScores{f64: make([][][]float64, k)}
}

// add appends a score of length n to task j's.
func (s *trunkScores) add(j, n int) {
	if s.f32 != nil {
		s.f32[j] = append(s.f32[j], make([]float32, n))
		return
	}
	s.f64[j] = append(s.f64[j], make([]float64, n))
}
