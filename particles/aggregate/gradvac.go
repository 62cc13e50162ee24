package aggregate

import (
	"fmt"
	"math"
)

// DefaultGradVacBeta is GradVac's default β, the decay of its moving
// targets: LibMTL's and torchjd's default.
const DefaultGradVacBeta = 0.5

// GradVac is gradient vaccine (Wang, Tsvetkov, Firat & Cao, "Gradient
// Vaccine: Investigating and Improving Multi-task Optimization in
// Massively Multilingual Models", ICLR 2021, Algorithm 1 with Eqs. 2
// and 3): PCGrad with a moving target. Each task's gradient is altered,
// one other task at a time, so that its cosine with that task's gradient
// reaches the pair's target φ̂ᵢⱼ, an exponential moving average of the
// cosines seen at earlier steps, and the direction is the sum of the
// altered gradients:
//
//	gᵢ' ← gᵢ;  for j ≠ i in random order:
//	    φ = gᵢ'·gⱼ / ‖gᵢ'‖‖gⱼ‖
//	    if φ < φ̂ᵢⱼ:  gᵢ' ← gᵢ' + ‖gᵢ'‖(φ̂ᵢⱼ√(1−φ²) − φ√(1−φ̂ᵢⱼ²)) / (‖gⱼ‖√(1−φ̂ᵢⱼ²)) · gⱼ
//	    φ̂ᵢⱼ ← (1−β)φ̂ᵢⱼ + βφ
//	d = Σᵢ gᵢ'.
//
// The correction turns gᵢ' within the plane of gᵢ' and gⱼ until its
// cosine with gⱼ is φ̂ᵢⱼ exactly (Eq. 2). The targets start at 0, so the
// first step is PCGrad's (a conflict is projected away), and with β = 0
// every step is; with β > 0 a pair whose gradients usually agree is held
// to its usual agreement. Every visited pair updates its target, with
// the cosine measured before its correction, as torchjd reads the
// paper's Algorithm 1; LibMTL updates a target only when it corrects. A pair with a
// zero gradient (gᵢ' or gⱼ) has no cosine: it is skipped and keeps its
// target. No ε is added to the denominators, and a cosine within 4·2⁻⁵²
// of its target counts as reaching it (rounding). A target that has
// reached 1 cannot be reached by a correction from a cosine below it
// (the weight is infinite): Aggregate then returns an error wrapping
// ErrUndefined.
//
// The tasks j ≠ i are visited in PCGrad's order: the Fisher-Yates
// shuffle keyed by drawUint64(Seed, Particle, Index, i), drawn afresh
// for every i. The targets are the state (Stateful): K, then the K×K
// matrix φ̂ row by row (its diagonal unused, 0).
//
// LibMTL and torchjd can also keep one target per layer or per
// parameter tensor; here the shared parameters are one block, their
// default (LibMTL's group_type 0).
//
// Sign and scale: the gradients are loss gradients and d is a descent
// direction for θ ← θ − lr·d; negating G leaves every cosine unchanged
// and negates the corrections, so d is negated. d is on the scale of
// the sum of the task gradients, as in LibMTL and torchjd.
//
// It computes on the host (on a GPU host, from the gradients copied
// there), in O(K²d) operations.
type GradVac struct {
	// Beta is β ∈ [0, 1], the targets' decay; 0 means
	// DefaultGradVacBeta. Set a negative value for β = 0 (PCGrad).
	Beta float64

	targets, next []float64 // φ̂, K×K; next is the step's update
	k             int       // 0 before the first step
	proj, norm2   []float64
	order         []int
}

func (a *GradVac) beta() float64 {
	switch {
	case a.Beta == 0:
		return DefaultGradVacBeta
	case a.Beta < 0:
		return 0
	}
	return a.Beta
}

// Aggregate implements Aggregator.
func (a *GradVac) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, d, err := checkGradients("gradvac", dst, g)
	if err != nil {
		return err
	}
	if beta := a.beta(); beta > 1 {
		return fmt.Errorf("gradvac: β = %v, want at most 1", beta)
	}
	if err := checkTaskCount(a.k, k); err != nil {
		return fmt.Errorf("gradvac: %w", err)
	}
	if a.k == 0 {
		a.k, a.targets = k, make([]float64, k*k)
	}
	a.next = growFloats(a.next, k*k)
	copy(a.next, a.targets)
	a.proj = growFloats(a.proj, d)
	a.norm2 = growFloats(a.norm2, k)
	for j := range k {
		a.norm2[j] = dotProduct(g[j], g[j])
	}
	clear(dst)
	for i := range k {
		copy(a.proj, g[i])
		for _, j := range taskOrder(&a.order, i, k, s) {
			if err := a.vaccinate(i, j, g[j], a.norm2[j]); err != nil {
				return err
			}
		}
		for x, v := range a.proj {
			dst[x] += v
		}
	}
	// Only a finished step moves the targets.
	a.targets, a.next = a.next, a.targets
	return nil
}

// vaccinate alters a.proj, task i's gradient so far, towards gⱼ (whose
// squared norm is norm2) if its cosine with gⱼ is below the pair's
// target, and moves the target (in a.next).
func (a *GradVac) vaccinate(i, j int, gj []float64, norm2 float64) error {
	pn := math.Sqrt(dotProduct(a.proj, a.proj))
	if pn == 0 || norm2 == 0 {
		return nil
	}
	gn := math.Sqrt(norm2)
	phi := max(-1, min(1, dotProduct(a.proj, gj)/(pn*gn)))
	target := a.targets[i*a.k+j]
	// A shortfall within rounding of the cosine is none: two gradients
	// that stay parallel drive the target to 1 while their computed
	// cosine may stay an ulp below it.
	if target-phi > 4*float64Eps {
		rest := 1 - target*target
		if rest <= 0 {
			return fmt.Errorf("gradvac: tasks %d and %d: cosine %v below a target of %v: %w", i, j, phi, target, ErrUndefined)
		}
		f := pn * (target*math.Sqrt(1-phi*phi) - phi*math.Sqrt(rest)) / (gn * math.Sqrt(rest))
		for x, v := range gj {
			a.proj[x] += f * v
		}
	}
	beta := a.beta()
	a.next[i*a.k+j] = (1-beta)*target + beta*phi
	return nil
}

// State implements Stateful: K, then the targets row by row; nothing
// before the first step.
func (a *GradVac) State() []float64 {
	if a.k == 0 {
		return nil
	}
	return append([]float64{float64(a.k)}, a.targets...)
}

// SetState implements Stateful. It rejects a state whose length is not
// 1 + K², whose targets lie outside [−1, 1] or whose diagonal is not 0.
func (a *GradVac) SetState(state []float64) error {
	if len(state) == 0 {
		a.k, a.targets = 0, nil
		return nil
	}
	for i, v := range state {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("gradvac: state holds %v at %d", v, i)
		}
	}
	kf := state[0]
	if kf < 1 || kf != math.Trunc(kf) || kf*kf+1 != float64(len(state)) {
		return fmt.Errorf("gradvac: state's task count %v does not fit its length %d (1 + K²)", kf, len(state))
	}
	k := int(kf)
	for i := range k {
		for j := range k {
			v := state[1+i*k+j]
			if v < -1 || v > 1 || (i == j && v != 0) {
				return fmt.Errorf("gradvac: state's target for tasks %d and %d is %v, want a cosine (0 on the diagonal)", i, j, v)
			}
		}
	}
	a.k, a.targets = k, append([]float64(nil), state[1:]...)
	return nil
}
