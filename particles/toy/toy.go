// Package toy holds the paper's synthetic multi-target problems and the loop
// that moves particles on them with any update rule and optimiser.
//
//   - mog3 (Section 4.1.1): three mixtures of two 2-D Gaussians whose joint
//     high-density region is around the origin.
//   - zdt3 (Section 4.1.2, Zitzler, Deb & Thiele 2000): two objectives on
//     [0,1]^30 turned into targets p_k ∝ exp(−f_k).
//
// A problem is a Problem value: its densities, how particles start and
// stay in the domain, and what a run reports of it (the figures the paper
// compares methods by, what a plot shows). Register makes one available
// by name to Lookup, and so to train -dataset.
package toy

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/mtsgd/mtsgd/internal/registry"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

// Problem is a set of K unnormalised target densities on R^d.
type Problem struct {
	Name    string
	Dim     int // d
	Targets int // K

	// LogDensity returns log p_k(θ) up to an additive constant.
	LogDensity func(k int, theta []float64) float64
	// Score writes ∇log p_k(θ) into dst.
	Score func(k int, dst, theta []float64)
	// Init draws a starting position into theta.
	Init func(rng *rand.Rand, theta []float64)
	// Project maps θ back into the domain after every step; nil when the
	// domain is all of R^d.
	Project func(theta []float64)

	// Summary, when set, returns the figures by which the paper compares
	// methods on the problem, by name, for the log.
	Summary func(theta [][]float64) map[string]any
	// Objectives, when set, returns the objectives f_k at θ of targets
	// p_k ∝ exp(−f_k): a plot of two objectives shows the particles in
	// objective space, over Front.
	Objectives func(theta []float64) []float64
	// Front, when set, is the Pareto front of a problem of two
	// Objectives.
	Front *Front
	// Extent, for a problem on the plane (Dim 2), is the half-width of
	// the square around the origin that holds the targets' mass: a plot
	// shows the particles there, over the densities' contours.
	Extent float64
}

// A Front is the Pareto front of two objectives: f2 as a function of f1
// on each of a set of f1 intervals.
type Front struct {
	Segments [][2]float64
	F2       func(f1 float64) float64
}

var problems = registry.New[Problem]("toy problem")

// Register makes p available to Lookup under p.Name. A problem without
// a name, dimension, targets, density, score or initialisation, or a
// name taken, is a programmer error and panics.
func Register(p Problem) {
	if p.Dim < 1 || p.Targets < 1 || p.LogDensity == nil || p.Score == nil || p.Init == nil {
		panic(fmt.Sprintf("toy: problem %q lacks a dimension, targets, a density, a score or an initialisation", p.Name))
	}
	problems.Register(p.Name, p)
}

// Lookup returns the problem called name.
func Lookup(name string) (Problem, error) {
	if p, ok := problems.Lookup(name); ok {
		return p, nil
	}
	return Problem{}, fmt.Errorf("unknown toy problem %q (available: %s)", name, strings.Join(problems.Names(), ", "))
}

// Names lists the registered problems in the order they were registered.
func Names() []string { return problems.Names() }

// The paper's problems. Their values are stateless: a run may share one.
func init() {
	Register(MOG3())
	Register(ZDT3())
}

// Config describes one run of a rule on a problem.
type Config struct {
	Problem   Problem
	Rule      particles.Rule
	Optimizer func() optim.Optimizer // one per particle
	Particles int
	Steps     int
	Seed      uint64 // fixes the initial positions
	// OnStep, if set, is called after every step with the step number (1-based).
	OnStep func(step int)
}

// Run draws the initial particles and moves them for c.Steps steps: each step
// computes every target's score at every particle, asks the rule for the
// directions φ, and hands −φ to each particle's optimiser. It returns the
// final positions, one row per particle.
func Run(ctx context.Context, c Config) ([][]float64, error) {
	if c.Particles < 1 {
		return nil, fmt.Errorf("need at least one particle, got %d", c.Particles)
	}
	if c.Steps < 0 {
		return nil, fmt.Errorf("negative number of steps %d", c.Steps)
	}
	p := c.Problem
	m, d := c.Particles, p.Dim
	rng := rand.New(rand.NewPCG(c.Seed, 0x6d7473676400)) // second word: "mtsgd"
	e := particles.Ensemble{Theta: matrix(m, d), Scores: make([][][]float64, p.Targets)}
	for k := range e.Scores {
		e.Scores[k] = matrix(m, d)
	}
	opts := make([]optim.Optimizer, m)
	for i := range e.Theta {
		p.Init(rng, e.Theta[i])
		if p.Project != nil {
			p.Project(e.Theta[i])
		}
		opts[i] = c.Optimizer()
	}
	dir, grad := matrix(m, d), make([]float64, d)

	for step := 1; step <= c.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("stopped at step %d: %w", step, err)
		}
		for k := range e.Scores {
			for i, th := range e.Theta {
				p.Score(k, e.Scores[k][i], th)
			}
		}
		if err := c.Rule.Direction(dir, e); err != nil {
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
		for i, th := range e.Theta {
			for j, v := range dir[i] {
				grad[j] = -v
			}
			if err := opts[i].Step(th, grad); err != nil {
				return nil, fmt.Errorf("step %d, particle %d: %w", step, i, err)
			}
			if p.Project != nil {
				p.Project(th)
			}
		}
		if c.OnStep != nil {
			c.OnStep(step)
		}
	}
	return e.Theta, nil
}

func matrix(n, d int) [][]float64 {
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, d)
	}
	return v
}

// MOG3 is the paper's first toy problem. Target i is
// 0.7·N(μ_i1, 0.5·I) + 0.3·N(μ_i2, 0.5·I) with
// μ_11 = (4,−4), μ_12 = (0,0.5); μ_21 = (−4,4), μ_22 = (0.5,0);
// μ_31 = (−3,−3), μ_32 = (0,0). Particles start from N(0, 5·I): we read the
// paper's N(0, 5) as variance 5, as it writes its other Gaussians with
// their covariance (the authors' notebook draws 5·N(0, 1), variance 25).
func MOG3() Problem {
	means := [3][2][2]float64{
		{{4, -4}, {0, 0.5}},
		{{-4, 4}, {0.5, 0}},
		{{-3, -3}, {0, 0}},
	}
	weights := [2]float64{0.7, 0.3}
	const variance = 0.5
	// logComponents returns log(π_c N(θ | μ_c, 0.5·I)) for both components.
	logComponents := func(k int, theta []float64) [2]float64 {
		var l [2]float64
		for c := range l {
			dx, dy := theta[0]-means[k][c][0], theta[1]-means[k][c][1]
			l[c] = math.Log(weights[c]) - (dx*dx+dy*dy)/(2*variance) - math.Log(2*math.Pi*variance)
		}
		return l
	}
	return Problem{
		Name:    "mog3",
		Dim:     2,
		Targets: 3,
		LogDensity: func(k int, theta []float64) float64 {
			l := logComponents(k, theta)
			hi := math.Max(l[0], l[1])
			return hi + math.Log(math.Exp(l[0]-hi)+math.Exp(l[1]-hi))
		},
		Score: func(k int, dst, theta []float64) {
			// ∇log p = Σ_c r_c (μ_c − θ)/σ², r_c the posterior responsibility.
			l := logComponents(k, theta)
			hi := math.Max(l[0], l[1])
			r0, r1 := math.Exp(l[0]-hi), math.Exp(l[1]-hi)
			r0, r1 = r0/(r0+r1), r1/(r0+r1)
			for j := range dst {
				dst[j] = (r0*(means[k][0][j]-theta[j]) + r1*(means[k][1][j]-theta[j])) / variance
			}
		},
		Init: func(rng *rand.Rand, theta []float64) {
			for j := range theta {
				theta[j] = math.Sqrt(5) * rng.NormFloat64()
			}
		},
		// The fraction near the origin measures how many particles
		// found the three targets' joint high-density region.
		Summary: func(theta [][]float64) map[string]any {
			return map[string]any{"within_1.5_of_origin": FractionWithin(theta, 1.5)}
		},
		Extent: 7,
	}
}

// FractionWithin returns the fraction of particles within distance r of the
// origin.
func FractionWithin(theta [][]float64, r float64) float64 {
	n := 0
	for _, th := range theta {
		s := 0.0
		for _, v := range th {
			s += v * v
		}
		if s <= r*r {
			n++
		}
	}
	return float64(n) / float64(len(theta))
}

// Memory is a lower bound on the bytes Run holds for m particles of p:
// the positions, every target's scores and the directions (float64), and,
// when the rule is a kernel rule, the kernel matrices it keeps between
// steps (particles.KernelMemory). The optimisers' states come on top.
func Memory(p Problem, m int, kernelRule bool) float64 {
	vectors := 8 * float64(m) * float64(p.Dim) * float64(2+p.Targets)
	if kernelRule {
		return vectors + particles.KernelMemory(m)
	}
	return vectors
}
