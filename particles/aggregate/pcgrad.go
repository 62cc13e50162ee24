package aggregate

// PCGrad is projecting conflicting gradients (Yu et al., "Gradient
// Surgery for Multi-Task Learning", NeurIPS 2020, Algorithm 1): each
// task's gradient is stripped, one other task at a time, of its
// component against that task's gradient, and the direction is the sum
// of the projected gradients,
//
//	gᵢ' ← gᵢ;  for j ≠ i in random order: if gᵢ'·gⱼ < 0, gᵢ' ← gᵢ' − (gᵢ'·gⱼ/‖gⱼ‖²) gⱼ
//	d = Σᵢ gᵢ'.
//
// As in the paper, gᵢ' is projected onto the normal plane of the
// original gⱼ (not its projected form), only on a strict conflict
// gᵢ'·gⱼ < 0 (so a zero gⱼ, which conflicts with nothing, is skipped and
// no ε is added to ‖gⱼ‖²), and the tasks j ≠ i are visited in an order
// drawn afresh for every i. The order for task i is the Fisher-Yates
// shuffle keyed by drawUint64(Seed, Particle, Index, i) (see draw.go),
// so it is reproducible from the Step alone. LibMTL's PCGrad shuffles
// all K tasks (j = i included) and adds 1e-8 to ‖gⱼ‖²; the authors'
// TensorFlow code draws one order per step for all i.
//
// Sign and scale: the gradients are loss gradients and d is a descent
// direction for the step θ ← θ − lr·d; negating G negates d (conflicts
// and projections are unchanged). d is on the scale of the sum of the
// task gradients, as in the paper and LibMTL. With no conflicts d is
// that sum.
//
// PCGrad has no parameters: its zero value is ready to use. It computes
// on the host (on a GPU host, from the gradients copied there), in
// O(K²d) operations.
type PCGrad struct {
	proj  []float64 // the projected gradient gᵢ'
	norm2 []float64 // ‖gⱼ‖²
	order []int
}

// Aggregate implements Aggregator.
func (p *PCGrad) Aggregate(dst []float64, g [][]float64, s Step) error {
	k, d, err := checkGradients("pcgrad", dst, g)
	if err != nil {
		return err
	}
	p.proj = growFloats(p.proj, d)
	p.norm2 = growFloats(p.norm2, k)
	for j := range k {
		p.norm2[j] = dotProduct(g[j], g[j])
	}
	clear(dst)
	for i := range k {
		copy(p.proj, g[i])
		for _, j := range taskOrder(&p.order, i, k, s) {
			if p.norm2[j] == 0 {
				continue
			}
			if c := dotProduct(p.proj, g[j]); c < 0 {
				f := c / p.norm2[j]
				for x, v := range g[j] {
					p.proj[x] -= f * v
				}
			}
		}
		for x, v := range p.proj {
			dst[x] += v
		}
	}
	return nil
}

// taskOrder returns the tasks j ≠ i in the order drawn for task i at
// step s (PCGrad's, and GradVac's), in *order's memory.
func taskOrder(order *[]int, i, k int, s Step) []int {
	o := (*order)[:0]
	for j := range k {
		if j != i {
			o = append(o, j)
		}
	}
	shuffle(o, drawUint64(s.Seed, s.Particle, s.Index, uint64(i)))
	*order = o
	return o
}
