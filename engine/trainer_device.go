package engine

import (
	"fmt"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

// nextMoves says which vectors the moves after an evaluation move: a
// heads-first step moves the heads after its first and the trunks after
// its second, another both after its one.
type nextMoves struct {
	u             Update
	trunks, heads bool
}

// move is the move of one set of resident vectors: its rule's direction
// (−φ) into dir from theta and scores (k tasks, the gradients), from the
// products the rule reads (grams), which readBack brought back.
type move struct {
	rule               particles.DeviceRule
	dir, theta, scores matrix
	k                  int
	task               string // "" for the trunks'
	grams              [][]float64
	values             [][]float64 // the trunks' move: the step's losses, for rules that read them
}

func (x *move) ensemble(r *resident, step int) particles.DeviceEnsemble {
	return particles.DeviceEnsemble{Theta: x.theta.p, Scores: x.scores.p, M: r.m, K: x.k, D: x.theta.cols, Step: step - 1, Values: x.values, Work: &r.work, Negated: true}
}

// plan lists the moves of tr.next: the trunks' (if they have parameters),
// then each task's heads'.
func (tr *Trainer) plan() []move {
	r, n := tr.res, tr.next
	var ms []move
	if n.trunks && r.trunk.cols > 0 {
		ms = append(ms, move{rule: n.u.Trunk.(particles.DeviceRule), dir: r.trunkDir, theta: r.trunk, scores: r.trunkScore, k: r.k, values: tr.losses})
	}
	if n.heads {
		for j, t := range tr.cfg.Tasks {
			ms = append(ms, move{rule: n.u.Head.(particles.DeviceRule), dir: r.headDir[j], theta: r.heads[j], scores: r.headScore[j], k: 1, task: t.Name})
		}
	}
	return ms
}

// readBack scales the scores of the moves to come (tr.next) and brings
// back, in one copy, what a step's passes left on the device: every
// particle's losses and batch statistics, into grads, the row sums of the
// scores, which it returns for checkScores, and the products the moves'
// rules read (particles.DeviceRule's Grams), into r.moves.
func (tr *Trainer) readBack(step int, grads []*Grads) ([]float64, error) {
	r, n := tr.res, tr.next
	if n.trunks {
		if err := tr.scaleOnDevice(n.u, false); err != nil {
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
	}
	if n.heads {
		if err := tr.scaleOnDevice(n.u, true); err != nil {
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
	}
	ns, err := r.rowSums(r.sums, r.written(n))
	if err != nil {
		return nil, fmt.Errorf("step %d: %w", step, err)
	}
	r.moves = tr.plan()
	var gs [][]particles.Gram
	size := 0
	for i := range r.moves {
		x := &r.moves[i]
		g := x.rule.Grams(x.ensemble(r, step))
		gs = append(gs, g)
		size += particles.GramsSize(g)
	}
	if size > r.gramsCap {
		return nil, fmt.Errorf("step %d: the rules read %d values of products, room for %d", step, size, r.gramsCap)
	}
	at := r.grams
	for i, x := range r.moves {
		if err := particles.ComputeGrams(r.dev, at, x.theta.cols, gs[i]); err != nil {
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
		at += gpu.Ptr(8 * particles.GramsSize(gs[i]))
	}
	head := r.m*(r.k+r.stats) + r.m // the scores' row sums
	all := r.hostFloats(r.headLen() + size)
	if err := r.dev.Download(gpu.Bytes(all), r.back); err != nil {
		return nil, fmt.Errorf("step %d: %w", step, err)
	}
	// The last move's directions first: their step came before this one.
	if err := tr.checkPending(all[head+2*r.k*r.m:]); err != nil {
		return nil, err
	}
	for i, g := range grads {
		copy(g.Loss, all[i*r.k:(i+1)*r.k])
		copy(g.Stats, all[r.m*r.k+i*r.stats:r.m*r.k+(i+1)*r.stats])
	}
	prods := all[r.headLen():]
	for i := range r.moves {
		r.moves[i].grams = particles.SplitGrams(prods, gs[i])
		prods = prods[particles.GramsSize(gs[i]):]
	}
	return all[head : head+ns], nil
}

// written returns the score matrices that the evaluation made for the
// moves n has written: the trunks' scores when the trunks move next,
// followed by the heads' when they do. The first evaluation of a
// heads-first step leaves the trunks' scores as they were, which before
// the first step is whatever the device's allocation held.
func (r *resident) written(n nextMoves) []matrix {
	var xs []matrix
	if n.trunks {
		xs = append(xs, r.trunkScore)
	}
	if n.heads {
		xs = append(xs, r.headScore...)
	}
	return xs
}

// checkScores reports the first score with a NaN or Inf as a
// *NotFiniteError, from the scores' row sums (readBack).
func (tr *Trainer) checkScores(step int, sums []float64) error {
	r := tr.res
	which, row, at, err := r.firstNotFinite(r.written(tr.next), sums)
	switch {
	case err != nil:
		return fmt.Errorf("step %d: %w", step, err)
	case which < 0:
		return nil
	case tr.next.trunks && which == 0:
		return &NotFiniteError{Step: step, Particle: row % r.m, Task: tr.cfg.Tasks[row/r.m].Name, What: "trunk gradient", Index: at}
	case tr.next.trunks:
		which-- // past the trunks' scores
	}
	return &NotFiniteError{Step: step, Particle: row, Task: tr.cfg.Tasks[which].Name, What: "head gradient", Index: at}
}

// moveOnDevice makes the moves readBack planned (the trunks' if trunks,
// the heads' if heads): every direction from the products read back,
// their row sums for the check that the next copy back makes
// (dirCheck), then the running statistics and the optimisers' steps.
func (tr *Trainer) moveOnDevice(step int, trunks, heads bool) error {
	r := tr.res
	var dirs []matrix
	var tasks []string
	for i := range r.moves {
		x := &r.moves[i]
		if x.task == "" && !trunks || x.task != "" && !heads {
			return fmt.Errorf("step %d: engine: a move of the %q vectors not planned", step, x.task)
		}
		if err := x.rule.DirectionFromGrams(r.dev, x.dir.p, x.ensemble(r, step), x.grams); err != nil {
			return moveError(step, x.task, err)
		}
		dirs, tasks = append(dirs, x.dir), append(tasks, x.task)
	}
	r.moves = r.moves[:0]
	n, err := r.rowSums(r.dirSums, dirs)
	if err != nil {
		return fmt.Errorf("step %d: checking the directions: %w", step, err)
	}
	r.pending = &dirCheck{step: step, dirs: dirs, tasks: tasks, n: n}
	if trunks {
		for i, p := range tr.Particles {
			if err := tr.lanes.machines[0].updateStats(p, tr.grads[i].Stats, tr.in.N); err != nil {
				return err
			}
		}
	}
	// Each particle's optimisers step on its lane: one launch per vector
	// for the whole ensemble.
	err = tr.descendAll(step, trunks, heads)
	if ferr := tr.lanes.ens.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("step %d: the optimisers: %w", step, ferr)
	}
	return err
}

// descendAll steps the trunks' optimisers (if trunks) and the heads' (if
// heads) along −φ, each particle's on its lane.
func (tr *Trainer) descendAll(step int, trunks, heads bool) error {
	r := tr.res
	if trunks {
		for i := range tr.Particles {
			if err := r.descend(tr.lanes.ens.Lane(i), tr.trunkOpt[i], r.trunk, r.trunkDir, i); err != nil {
				return fmt.Errorf("step %d, particle %d: trunk optimiser: %w", step, i, err)
			}
		}
	}
	if heads {
		for j, t := range tr.cfg.Tasks {
			for i := range tr.Particles {
				if err := r.descend(tr.lanes.ens.Lane(i), tr.headOpt[i][j], r.heads[j], r.headDir[j], i); err != nil {
					return fmt.Errorf("step %d, particle %d: task %s head optimiser: %w", step, i, t.Name, err)
				}
			}
		}
	}
	return nil
}

// moveError names the move (task "": the trunks') in err.
func moveError(step int, task string, err error) error {
	if task == "" {
		return fmt.Errorf("step %d: trunk update: %w", step, err)
	}
	return fmt.Errorf("step %d: task %s head update: %w", step, task, err)
}

// checkPending makes the pending check of the last move's directions
// (dirCheck) from sums, which begin with their row sums read back, and
// clears it. A NaN or Inf in them is reported as a *NotFiniteError of
// that move's step, and the trainer fails for good (Trainer.failed): the
// parameters moved along it.
func (tr *Trainer) checkPending(sums []float64) error {
	r := tr.res
	c := r.pending
	if c == nil {
		return nil
	}
	r.pending = nil
	which, row, at, err := r.firstNotFinite(c.dirs, sums[:c.n])
	if err != nil || which < 0 {
		if err != nil {
			return fmt.Errorf("step %d: checking the directions: %w", c.step, err)
		}
		return nil
	}
	what := "trunk update direction (kernel)"
	if c.tasks[which] != "" {
		what = "head update direction (kernel)"
	}
	nf := &NotFiniteError{Step: c.step, Particle: row, Task: c.tasks[which], What: what, Index: at}
	tr.failed = moveError(c.step, c.tasks[which], nf)
	return tr.failed
}

// settle makes the pending check of the last move's directions, if any,
// reading their row sums back on their own, and reports the trainer's
// failure, if it failed: Sync, Predict and Close call it, so that a
// non-finite direction is reported before anything reads or saves the
// parameters that moved along it.
func (tr *Trainer) settle() error {
	if tr.failed != nil {
		return tr.failed
	}
	r := tr.res
	if r == nil || r.pending == nil {
		return nil
	}
	sums := r.hostFloats(r.pending.n)
	if err := r.dev.Download(gpu.Bytes(sums), r.dirSums); err != nil {
		return fmt.Errorf("step %d: checking the directions: %w", r.pending.step, err)
	}
	return tr.checkPending(sums)
}

// descend steps the optimiser o of particle i along −φ, dir's row i
// (dir holds −φ, a gradient to descend), on the resident vector x, on
// dev (the particle's lane).
func (r *resident) descend(dev gpu.Device, o optim.Optimizer, x, dir matrix, i int) error {
	if x.cols == 0 {
		return nil
	}
	r.hostStale = true
	return o.(optim.DeviceOptimizer).StepOnDevice(dev, x.row(i), dir.row(i), x.cols)
}
