//go:build cgo

package ops

import (
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
)

// Tensors lays its tensors one after another in one buffer the Device
// owns, LoadAllFrom fills them from one float64 vector with one kernel
// and StoreAllTo writes them, times a, into one with one (two with
// a ≠ 1); tensors that do not lie one after another are filled and
// written one by one, to the same values. Close frees the buffer.
func TestTensorsLoadStoreAll(t *testing.T) {
	emu := kernels.NewEmulator()
	defer emu.Close()
	dev := gpu.NewCounting(emu)
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		d := OnDevice(gorgonia.NewGraph(), dev)
		shapes := []tensor.Shape{{2, 3}, {3}, {1, 2, 2, 1}}
		block, err := d.Tensors(dt, shapes...)
		if err != nil {
			t.Fatal(err)
		}
		var apart []*tensor.Dense
		for _, s := range shapes {
			x, err := d.Tensor(dt, s...)
			if err != nil {
				t.Fatal(err)
			}
			apart = append(apart, x)
		}
		src := make([]float64, 13)
		for i := range src {
			src[i] = float64(i) + 0.25
		}
		p, err := dev.Alloc(8 * len(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := dev.Upload(p, gpu.Bytes(src)); err != nil {
			t.Fatal(err)
		}
		q, err := dev.Alloc(8 * len(src))
		if err != nil {
			t.Fatal(err)
		}
		for name, ts := range map[string][]*tensor.Dense{"block": block, "apart": apart} {
			before := dev.Counts().Launches
			if err := d.LoadAllFrom(ts, p); err != nil {
				t.Fatal(err)
			}
			launches := dev.Counts().Launches - before
			if want := map[string]int{"block": 1, "apart": 3}[name]; launches != want {
				t.Errorf("%v %s: %d launches, want %d", dt, name, launches, want)
			}
			var got []float64
			for _, x := range ts {
				if !d.Owns(x) {
					t.Errorf("%v %s: a tensor the Device does not own", dt, name)
				}
				v := make([]float64, x.Shape().TotalSize())
				if err := d.Get(x, v); err != nil {
					t.Fatal(err)
				}
				got = append(got, v...)
			}
			for i := range src {
				if got[i] != src[i] {
					t.Fatalf("%v %s: value %d is %v, want %v", dt, name, i, got[i], src[i])
				}
			}
			vs := make([]gorgonia.Value, len(ts))
			for i, x := range ts {
				vs[i] = x
			}
			for _, a := range []float64{1, -2} {
				before := dev.Counts().Launches
				if err := d.StoreAllTo(q, vs, a); err != nil {
					t.Fatal(err)
				}
				launches := dev.Counts().Launches - before
				want := map[string]int{"block": 1, "apart": 3}[name]
				if a != 1 {
					want *= 2
				}
				if launches != want {
					t.Errorf("%v %s: a = %v: %d launches, want %d", dt, name, a, launches, want)
				}
				stored := make([]float64, len(src))
				if err := dev.Download(gpu.Bytes(stored), q); err != nil {
					t.Fatal(err)
				}
				for i := range src {
					if stored[i] != a*src[i] {
						t.Fatalf("%v %s: stored value %d is %v, want %v", dt, name, i, stored[i], a*src[i])
					}
				}
			}
		}
		dev.Free(p)
		dev.Free(q)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if n := emu.Live(); n != 0 {
			t.Errorf("%v: %d device buffers left after Close", dt, n)
		}
	}
}

// A Kept told to Skip copies nothing on a device (no launch), and its
// Fetch then fails; told not to, the next run keeps the values again.
func TestKeptSkip(t *testing.T) {
	emu := kernels.NewEmulator()
	defer emu.Close()
	dev := gpu.NewCounting(emu)
	g := gorgonia.NewGraph()
	d := OnDevice(g, dev)
	defer d.Close()
	x, err := d.Tensor(tensor.Float32, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 2, 3, 4, 5, 6}
	if err := d.Set(x, want); err != nil {
		t.Fatal(err)
	}
	k, err := Keep(gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(2, 3), gorgonia.WithValue(x)))
	if err != nil {
		t.Fatal(err)
	}
	vm := d.VM(g)
	defer vm.Close()
	for _, skip := range []bool{true, false, true} {
		k.Skip(skip)
		before := dev.Counts().Launches
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Reset()
		launches := dev.Counts().Launches - before
		err := k.Fetch()
		switch {
		case skip && (launches != 0 || err == nil || k.OnDevice() != nil):
			t.Errorf("skipped: %d launches, Fetch %v, OnDevice %v", launches, err, k.OnDevice())
		case !skip && (launches != 1 || err != nil):
			t.Errorf("kept: %d launches, Fetch %v", launches, err)
		case !skip:
			for i := range want {
				if k.Values[i] != want[i] {
					t.Fatalf("kept value %d is %v, want %v", i, k.Values[i], want[i])
				}
			}
		}
	}
}
