package ops

import (
	"fmt"
	"sync"

	"gorgonia.org/gorgonia"
)

// A Recording lists the ops built into one graph, in order, so that a
// second graph built by the same code can replay them (Replay): there
// the ops skip their forward computation, and their gradients read what
// the recorded ops kept from their last run (im2col patches, pooling
// argmaxes, layer inputs and outputs). Package engine uses this for
// the trunk gradients of tasks after the first: the step graph runs the
// trunk forward once, and the trunk graph only runs backward from
// another upstream gradient. That is correct only while the replaying
// graph runs right after the recorded one with the same parameters and
// inputs, and only for graphs whose every op is one of this package's
// that can replay (Stop checks the second).
type Recording struct {
	ops []gorgonia.Op
}

// replayable is an op that can stand in for a recorded one.
type replayable interface {
	gorgonia.Op
	// replay makes the op a replay of recorded, which must be the same
	// kind of op with the same sizes.
	replay(recorded gorgonia.Op) error
}

// graphUse is what is being done to one graph: recording or replaying.
type graphUse struct {
	rec    *Recording
	replay bool
	next   int
}

var graphUses sync.Map // *gorgonia.ExprGraph → *graphUse

// Record starts recording the ops built into g.
func Record(g *gorgonia.ExprGraph) *Recording {
	r := &Recording{}
	graphUses.Store(g, &graphUse{rec: r})
	return r
}

// Replay makes the ops built into g, from now on, replays of r's, in
// order.
func Replay(g *gorgonia.ExprGraph, r *Recording) {
	graphUses.Store(g, &graphUse{rec: r, replay: true})
}

// Stop ends recording or replaying in g. For a replay it fails unless
// every op of r was replayed and every computed node of g is a replay:
// the graph then computes nothing forward.
func Stop(g *gorgonia.ExprGraph) error {
	v, ok := graphUses.LoadAndDelete(g)
	if !ok {
		return fmt.Errorf("ops: no recording or replay in this graph")
	}
	s := v.(*graphUse)
	if !s.replay {
		return nil
	}
	if s.next != len(s.rec.ops) {
		return fmt.Errorf("ops: replayed %d of %d recorded ops", s.next, len(s.rec.ops))
	}
	for _, n := range g.AllNodes() {
		if n.IsVar() {
			continue
		}
		if _, ok := n.Op().(replayable); !ok {
			return fmt.Errorf("ops: %v is not an op that can replay", n.Op())
		}
	}
	return nil
}

// apply adds op applied to inputs to their graph, recording it or
// making it a replay if the graph is being recorded or replayed.
func apply(op gorgonia.Op, inputs ...*gorgonia.Node) (*gorgonia.Node, error) {
	if d := deviceOf(inputs[0]); d != nil {
		op.(interface{ place(*Device) }).place(d)
	}
	if v, ok := graphUses.Load(inputs[0].Graph()); ok {
		s := v.(*graphUse)
		if !s.replay {
			s.rec.ops = append(s.rec.ops, op)
		} else {
			r, ok := op.(replayable)
			if !ok {
				return nil, fmt.Errorf("ops: %v cannot replay", op)
			}
			if s.next >= len(s.rec.ops) {
				return nil, fmt.Errorf("ops: more ops than the %d recorded", len(s.rec.ops))
			}
			if err := r.replay(s.rec.ops[s.next]); err != nil {
				return nil, err
			}
			s.next++
		}
	}
	return gorgonia.ApplyOp(op, inputs...)
}

func (op *convOp) replay(recorded gorgonia.Op) error {
	r, ok := recorded.(*convOp)
	if !ok || r.g != op.g || r.bias != op.bias {
		return fmt.Errorf("ops: %v cannot replay %v", op, recorded)
	}
	op.twin = r
	return nil
}

func (op *poolOp) replay(recorded gorgonia.Op) error {
	r, ok := recorded.(*poolOp)
	if !ok || r.g != op.g {
		return fmt.Errorf("ops: %v cannot replay %v", op, recorded)
	}
	op.twin = r
	return nil
}

func (op *linearOp) replay(recorded gorgonia.Op) error {
	r, ok := recorded.(*linearOp)
	if !ok || r.n != op.n || r.in != op.in || r.out != op.out || r.relu != op.relu || r.inputGrad != op.inputGrad {
		return fmt.Errorf("ops: %v cannot replay %v", op, recorded)
	}
	op.twin = r
	return nil
}

func (op *bnOp) replay(recorded gorgonia.Op) error {
	r, ok := recorded.(*bnOp)
	if !ok || r.n != op.n || r.c != op.c || r.hw != op.hw || r.eps != op.eps {
		return fmt.Errorf("ops: %v cannot replay %v", op, recorded)
	}
	op.twin = r
	return nil
}
