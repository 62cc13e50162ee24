package study

import (
	"math"
	"strings"
	"testing"
)

// accuracyRow is a study row with only test accuracy, one value per seed.
func accuracyRow(method, task string, acc ...float64) studyRow {
	r := studyRow{Method: method, Task: task, Seeds: len(acc), Vals: make([]stat, len(studyMetrics))}
	r.Vals[metricIndex("accuracy")] = newStat(acc)
	return r
}

// Δm per seed, worked by hand: single-task training's mean accuracies are
// 0.91 (task a) and 0.80 (task b). Method m's first run (0.91, 0.84)
// gains 0 and 5 %, Δm 2.5; its second (0.9282, 0.80) gains 2 and 0 %,
// Δm 1.0. A method with a task short of a seed, and every method when
// `single` is absent, get none.
func TestSeedDeltaM(t *testing.T) {
	rows := []studyRow{
		accuracyRow("single", "a", 0.90, 0.92), accuracyRow("single", "b", 0.80, 0.80),
		accuracyRow("m", "a", 0.91, 0.9282), accuracyRow("m", "b", 0.84, 0.80),
		accuracyRow("short", "a", 0.91, 0.92), accuracyRow("short", "b", 0.84),
	}
	dm := seedDeltaM(rows)
	got, ok := dm["m"]
	if !ok || got.N != 2 {
		t.Fatalf("Δm of m: %+v, %v; want two seeds", got, ok)
	}
	for i, want := range []float64{2.5, 1.0} {
		if math.Abs(got.vals[i]-want) > 1e-12 {
			t.Errorf("seed %d: Δm %v, want %v (to 1e-12)", i+1, got.vals[i], want)
		}
	}
	if s, ok := dm["single"]; !ok || math.Abs(s.Mean) > 1e-12 {
		t.Errorf("single's own Δm: %+v, %v; want mean 0", s, ok)
	}
	if _, ok := dm["short"]; ok {
		t.Errorf("a method whose tasks have differing seeds got a Δm")
	}
	if len(seedDeltaM(rows[2:])) != 0 {
		t.Errorf("Δm without single-task runs")
	}
}

// A pair set's table has a row per pair and a column per measure either
// pair has, each cell subject − other per task and the verdict in a word;
// Δm's cell is one figure.
func TestPairTable(t *testing.T) {
	rows := []studyRow{
		accuracyRow("single", "a", 0.90, 0.92), accuracyRow("single", "b", 0.80, 0.80),
		accuracyRow("m", "a", 0.91, 0.9282), accuracyRow("m", "b", 0.84, 0.80),
		accuracyRow("linear", "a", 0.95), accuracyRow("linear", "b", 0.85),
	}
	set := pairSet{Pairs: []pair{newPair("m", "single", rows, nil), newPair("m", "linear", rows, nil)}}
	want := strings.Join([]string{
		"| subject | other | accuracy | Δm % |",
		"|---|---|---|---|",
		// m − single: a 0.9191 − 0.91 = +0.0091, sds 0.0129 and 0.0141;
		// b +0.02, sds 0.0283 and 0; Δm 1.75 ± 1.06 against single's own
		// per-seed Δm ∓0.55, 0 ± 0.78.
		"| m | single | +0.0091 within / +0.0200 within | +1.75 within |",
		// linear has one seed: Δm (4.40 + 6.25) / 2 = 5.32 (a 0.95 against
		// 0.91, b 0.85 against 0.80); 1.75 − 5.32 = −3.57.
		"| m | linear | −0.0309 one seed / −0.0300 one seed | −3.57 one seed |",
	}, "\n") + "\n"
	if got := pairTable(set, false); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := pairTable(set, true); got != "| subject | other |\n|---|---|\n" {
		t.Errorf("at best/, with no rows: %q", got)
	}
}
