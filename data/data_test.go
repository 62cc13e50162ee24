package data

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// counting is a data set whose example i has input (i, -i) and targets
// (i mod 3, i/2).
type counting struct {
	n    int
	fail int // Example fails for this index; -1: never
}

func (c counting) Name() string      { return "counting" }
func (c counting) InputShape() []int { return []int{2} }
func (c counting) Len() int          { return c.n }
func (c counting) Tasks() []Task {
	return []Task{{Name: "mod3", Kind: Classification, Classes: 3}, {Name: "half", Kind: Regression}}
}
func (c counting) Example(i int, x, y []float32) error {
	if i == c.fail {
		return errors.New("unreadable")
	}
	x[0], x[1] = float32(i), -float32(i)
	y[0], y[1] = float32(i%3), float32(i)/2
	return nil
}

// epochOrder runs one epoch and returns the indices in the order served,
// checking every batch's layout on the way.
func epochOrder(t *testing.T, d Dataset, size int, shuffle bool, seed uint64, epoch int) []int {
	t.Helper()
	var order []int
	b := Epoch(d, size, shuffle, seed, epoch)
	batches := 0
	for b.Next() {
		batches++
		bt := b.Batch()
		if bt.Size() > size || len(bt.Inputs) != 2*bt.Size() {
			t.Fatalf("batch of %d examples with %d inputs", bt.Size(), len(bt.Inputs))
		}
		for k, i := range bt.Index {
			if bt.Inputs[2*k] != float32(i) || bt.Inputs[2*k+1] != -float32(i) ||
				bt.Targets[0][k] != float32(i%3) || bt.Targets[1][k] != float32(i)/2 {
				t.Fatalf("example %d laid out wrong", i)
			}
		}
		order = append(order, bt.Index...)
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	if batches != b.Len() {
		t.Errorf("%d batches, Len says %d", batches, b.Len())
	}
	return order
}

func TestEpoch(t *testing.T) {
	d := counting{n: 103, fail: -1}
	plain := epochOrder(t, d, 10, false, 1, 0)
	if len(plain) != 103 || !slices.IsSorted(plain) {
		t.Errorf("unshuffled epoch is not 0..102 in order")
	}
	a := epochOrder(t, d, 10, true, 1, 0)
	if !slices.Equal(a, epochOrder(t, d, 10, true, 1, 0)) {
		t.Error("same seed and epoch, different order")
	}
	if slices.Equal(a, epochOrder(t, d, 10, true, 1, 1)) || slices.Equal(a, epochOrder(t, d, 10, true, 2, 0)) {
		t.Error("another epoch or seed, same order")
	}
	if slices.Equal(a, plain) {
		t.Error("shuffled order is the identity")
	}
	sorted := slices.Clone(a)
	slices.Sort(sorted)
	if !slices.Equal(sorted, plain) {
		t.Error("a shuffled epoch does not serve every example exactly once")
	}
}

// Skipping k batches serves the rest of the epoch exactly as a full pass.
func TestSkip(t *testing.T) {
	d := counting{n: 50, fail: -1}
	full := epochOrder(t, d, 8, true, 4, 2)
	b := Epoch(d, 8, true, 4, 2)
	b.Skip(3)
	var rest []int
	for b.Next() {
		rest = append(rest, b.Batch().Index...)
	}
	if !slices.Equal(rest, full[24:]) {
		t.Errorf("after Skip(3): %v, want %v", rest, full[24:])
	}
	// Skipping more batches than are left leaves none, however many.
	for _, n := range []int{7, 8, math.MaxInt} {
		b := Epoch(d, 8, true, 4, 2)
		b.Next()
		b.Skip(n)
		if b.Next() {
			t.Errorf("Skip(%d) after a batch left %v", n, b.Batch().Index)
		}
	}
}

func TestEpochStopsOnError(t *testing.T) {
	b := Epoch(counting{n: 20, fail: 13}, 8, false, 1, 0)
	n := 0
	for b.Next() {
		n++
	}
	if n != 1 || b.Err() == nil || b.Err().Error() != "counting: example 13: unreadable" {
		t.Errorf("%d batches then error %v", n, b.Err())
	}
}

func TestLimit(t *testing.T) {
	d := Limit(counting{n: 50, fail: -1}, 7)
	if d.Len() != 7 || d.Name() != "counting" || len(d.Tasks()) != 2 {
		t.Fatalf("Limit: len %d", d.Len())
	}
	if got := epochOrder(t, d, 4, true, 3, 0); len(got) != 7 || slices.Max(got) > 6 {
		t.Errorf("limited epoch served %v", got)
	}
	if Limit(d, 100).Len() != 7 || Limit(counting{n: 5}, -1).Len() != 5 {
		t.Error("Limit beyond the end or negative changed the length")
	}
}

func TestDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	t.Setenv(DirEnv, "")
	for _, tc := range []struct{ flag, env, want string }{
		{"/flag", "/env", "/flag"},
		{"", "/env", "/env"},
		{"", "", "/cache/mtsgd"},
	} {
		t.Setenv(DirEnv, tc.env)
		if got, err := Dir(tc.flag); err != nil || got != tc.want {
			t.Errorf("Dir(%q) with $%s=%q: %q, %v; want %q", tc.flag, DirEnv, tc.env, got, err, tc.want)
		}
	}
}
