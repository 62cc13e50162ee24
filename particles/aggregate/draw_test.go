package aggregate

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestDrawKeyParts checks that every part of the key changes the draw
// and that a draw is a pure function of its key.
func TestDrawKeyParts(t *testing.T) {
	base := drawUint64(1, 2, 3, 4)
	if drawUint64(1, 2, 3, 4) != base {
		t.Fatal("the same key drew two values")
	}
	for name, v := range map[string]uint64{
		"seed":     drawUint64(2, 2, 3, 4),
		"particle": drawUint64(1, 3, 3, 4),
		"index":    drawUint64(1, 2, 4, 4),
		"stream":   drawUint64(1, 2, 3, 5),
		"swapped":  drawUint64(1, 3, 2, 4),
	} {
		if v == base {
			t.Errorf("changing the %s left the draw at %#x", name, v)
		}
	}
}

// TestShuffleIsUniform draws the order of 3 items for 60,000 step
// indices and compares the counts of the 6 orders with the uniform
// distribution by Pearson's χ² test with 5 degrees of freedom. The keys
// are fixed, so the test is deterministic; the threshold is the χ²₅
// quantile at 1 − 1e-6 (about 35.9, from gonum's distuv), which a
// correct shuffle passes for all but one key set in a million.
func TestShuffleIsUniform(t *testing.T) {
	const n = 60000
	counts := map[[3]int]int{}
	p := make([]int, 3)
	for i := range n {
		p[0], p[1], p[2] = 0, 1, 2
		shuffle(p, drawUint64(7, 0, i, 0))
		if q := slices.Sorted(slices.Values(p)); !slices.Equal(q, []int{0, 1, 2}) {
			t.Fatalf("shuffle gave %v, not a permutation", p)
		}
		counts[[3]int(p)]++
	}
	if len(counts) != 6 {
		t.Fatalf("%d distinct orders of 3 items, want 6", len(counts))
	}
	chi2 := 0.0
	for _, c := range counts {
		e := float64(n) / 6
		chi2 += (float64(c) - e) * (float64(c) - e) / e
	}
	limit := distuv.ChiSquared{K: 5}.Quantile(1 - 1e-6)
	if chi2 > limit {
		t.Errorf("χ² = %.2f over 6 orders, above %.2f: %v", chi2, limit, counts)
	}
}

// TestBelowIsInRange checks below(n) < n, including n = 1 and n near 2⁶⁴
// where nearly half the draws are rejected.
func TestBelowIsInRange(t *testing.T) {
	s := splitMix64(drawUint64(0, 0, 0, 0))
	for _, n := range []uint64{1, 2, 3, 7, 1 << 63, 1<<63 + 1, ^uint64(0)} {
		for range 1000 {
			if v := s.below(n); v >= n {
				t.Fatalf("below(%d) = %d", n, v)
			}
		}
	}
}
