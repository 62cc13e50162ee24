package models

import (
	"fmt"

	"gorgonia.org/gorgonia"
)

// Independent turns single-task networks into a multi-task model with no
// shared trunk: "head" j is the whole of network j (its trunk and its one
// head), so each task is learnt by its own network, as the single-task
// baseline needs. Nets[j] must have one head and no batch normalisation;
// all must take the same input.
type Independent struct {
	Nets []Model
}

func (m Independent) InputShape() []int { return m.Nets[0].InputShape() }

// TrunkParams is empty: nothing is shared.
func (m Independent) TrunkParams() []Param { return nil }

// HeadParams is network task's trunk parameters, then its head's, named
// with the prefix "task<j>.".
func (m Independent) HeadParams(task int) []Param {
	net := m.Nets[task]
	ps := append(append([]Param(nil), net.TrunkParams()...), net.HeadParams(0)...)
	for i := range ps {
		ps[i].Name = fmt.Sprintf("task%d.%s", task, ps[i].Name)
	}
	return ps
}

// TrunkStats is empty: there is no trunk.
func (m Independent) TrunkStats() []Param { return nil }

// Trunk passes the input through.
func (m Independent) Trunk(x *gorgonia.Node, _ []*gorgonia.Node, _ *Norm) (*gorgonia.Node, error) {
	return x, nil
}

// Head runs network task on the input.
func (m Independent) Head(x *gorgonia.Node, task int, p []*gorgonia.Node) (*gorgonia.Node, error) {
	net := m.Nets[task]
	n := len(net.TrunkParams())
	if len(net.TrunkStats()) > 0 {
		return nil, fmt.Errorf("independent networks: task %d's network has batch normalisation", task)
	}
	features, err := net.Trunk(x, p[:n], &Norm{})
	if err != nil {
		return nil, err
	}
	return net.Head(features, 0, p[n:])
}
