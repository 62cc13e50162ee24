package aggregate

import (
	"testing"
)

func freshDWA() Stateful { return &DWA{} }

// dwaRun feeds losses, two steps an epoch, to a DWA with identity
// gradients and returns each step's weights.
func dwaRun(t *testing.T, w *DWA, first int, losses [][]float64) [][]float64 {
	t.Helper()
	k := len(losses[0])
	out := make([][]float64, len(losses))
	for i, l := range losses {
		out[i] = make([]float64, k)
		if err := w.Aggregate(out[i], identityGradients(k), Step{Losses: l, Index: first + i, StepsPerEpoch: 2}); err != nil {
			t.Fatalf("step %d: %v", first+i, err)
		}
	}
	return out
}

// TestDWAHandWorked checks the weights over four epochs of two steps on
// 2 tasks. References, worked by hand (softmax values in 40-digit
// decimal arithmetic): epochs 0 and 1 have weights 1; their mean losses
// are (2, 2) and (1, 2), so in epoch 2 r = (0.5, 1), r/T = (0.25, 0.5)
// and w = 2·softmax = (2/(1+e^0.25), 2e^0.25/(1+e^0.25)) =
// (0.87564699822840379195, 1.1243530017715962081); epoch 2's mean is
// (0.5, 3), so in epoch 3 r = (0.5, 1.5), r/T = (0.25, 0.75) and
// w = (2/(1+e^0.5), 2e^0.5/(1+e^0.5)) = (0.75508133759629087072,
// 1.2449186624037091293).
func TestDWAHandWorked(t *testing.T) {
	var w DWA
	got := dwaRun(t, &w, 0, [][]float64{
		{1, 2}, {3, 2}, // epoch 0, mean (2, 2)
		{1, 1}, {1, 3}, // epoch 1, mean (1, 2)
		{0.5, 4}, {0.5, 2}, // epoch 2, mean (0.5, 3)
		{9, 9}, {9, 9}, // epoch 3
	})
	want := [][]float64{
		{1, 1}, {1, 1},
		{1, 1}, {1, 1},
		{0.87564699822840379195, 1.1243530017715962081}, {0.87564699822840379195, 1.1243530017715962081},
		{0.75508133759629087072, 1.2449186624037091293}, {0.75508133759629087072, 1.2449186624037091293},
	}
	for i := range want {
		for k := range want[i] {
			assertClose(t, "w at step "+formatFloat(float64(i))+", task "+formatFloat(float64(k)), got[i][k], want[i][k], 1e-15)
		}
	}
}

// TestDWATemperature checks T = 0.5 on the same losses: in epoch 2
// r/T = (1, 2), so w₁ = 2/(1+e) = 0.53788284273999024150 (40-digit
// decimal arithmetic).
func TestDWATemperature(t *testing.T) {
	w := DWA{Temperature: 0.5}
	got := dwaRun(t, &w, 0, [][]float64{{1, 2}, {3, 2}, {1, 1}, {1, 3}, {7, 7}})
	assertClose(t, "w₁ in epoch 2", got[4][0], 0.53788284273999024150, 1e-15)
	assertClose(t, "w₁+w₂", got[4][0]+got[4][1], 2, 1e-15)
}

// TestDWAEpochs checks the bookkeeping of epochs: a value that starts
// in a later epoch counts from there, a jump over an epoch forgets the
// history (weights 1 until two consecutive epochs are known again), a
// zero mean gives the ratio 1, and stepping back an epoch or leaving out
// StepsPerEpoch is an error.
func TestDWAEpochs(t *testing.T) {
	var late DWA
	got := dwaRun(t, &late, 10, [][]float64{{1, 2}, {3, 2}, {1, 1}, {1, 3}, {9, 9}})
	assertClose(t, "w₁ in the third epoch seen", got[4][0], 0.87564699822840379195, 1e-15)

	var jump DWA
	dwaRun(t, &jump, 0, [][]float64{{1, 2}, {3, 2}, {1, 1}, {1, 3}})
	got = dwaRun(t, &jump, 6, [][]float64{{5, 1}, {5, 1}, {1, 1}, {1, 1}, {2, 1}})
	for i, want := range []float64{1, 1, 1, 1} {
		assertClose(t, "w₁ after a jump, step "+formatFloat(float64(i)), got[i][0], want, 0)
	}
	// Epochs 3 and 4 have means (5, 1) and (1, 1): r = (0.2, 1),
	// r/T = (0.1, 0.5), w₁ = 2/(1+e^0.4) = 0.80262467977509599926.
	assertClose(t, "w₁ two epochs after a jump", got[4][0], 0.80262467977509599926, 1e-15)

	var zero DWA
	got = dwaRun(t, &zero, 0, [][]float64{{0, 1}, {0, 1}, {3, 1}, {3, 1}, {1, 1}})
	assertClose(t, "w₁ after a zero mean", got[4][0], 1, 1e-15)

	var back DWA
	dwaRun(t, &back, 4, [][]float64{{1, 1}})
	if err := back.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{1, 1}, Index: 1, StepsPerEpoch: 2}); err == nil {
		t.Error("a step in an earlier epoch was accepted")
	}
	if err := back.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{1, 1}, Index: 5}); err == nil {
		t.Error("a step without StepsPerEpoch was accepted")
	}
	if err := back.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{1, 1}, Index: -1, StepsPerEpoch: 2}); err == nil {
		t.Error("a negative Index was accepted")
	}
	neg := DWA{Temperature: -1}
	if err := neg.Aggregate(make([]float64, 2), identityGradients(2), Step{Losses: []float64{1, 1}, StepsPerEpoch: 2}); err == nil {
		t.Error("a negative Temperature was accepted")
	}
}

func TestDWAState(t *testing.T) {
	checkStateRoundTrip(t, freshDWA)
	checkSetStateRejects(t, freshDWA)
	for name, s := range map[string][]float64{
		"epoch 1.5":    {1, 1.5, 0, 0, 0, 0, 0},
		"count −1":     {1, 1, -1, 0, 0, 0, 0},
		"known 3":      {1, 1, 1, 3, 0, 0, 0},
		"negative sum": {1, 1, 1, 0, -1, 0, 0},
	} {
		var w DWA
		if err := w.SetState(s); err == nil {
			t.Errorf("%s: SetState accepted %v", name, s)
		}
	}
}

func TestDWAErrors(t *testing.T) { checkInputErrors(t, asAggregator(freshDWA), true) }
func TestDWANoNaN(t *testing.T)  { checkNoNaN(t, asAggregator(freshDWA)) }
func TestDWAOdd(t *testing.T)    { checkOdd(t, asAggregator(freshDWA)) }
