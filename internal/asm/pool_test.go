package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaxPool2x2Grad checks the AVX-512 gradient of 2×2 pooling against
// the Go loop bit for bit: planes of 1 to 15 by 1 to 20 windows (a chunk
// of eight, its remainder), gradients with signed zeros, infinities and
// NaNs, and outputs whose argmax is any of the window's four inputs or
// none (ReLU's zero).
func TestMaxPool2x2Grad(t *testing.T) {
	needAVX512(t)
	defer func() { UseAVX512 = true }()
	rng := rand.New(rand.NewPCG(41, 42))
	for range 200 {
		oh, ow := 1+rng.IntN(15), 1+rng.IntN(20)
		h, w := 2*oh, 2*ow
		planes, p := (1+rng.IntN(3))*(1+rng.IntN(2)), oh*ow
		dy := make([]float32, planes*p)
		argmax := make([]int32, planes*p)
		for i := range dy {
			dy[i] = float32(rng.NormFloat64())
			if rng.IntN(4) == 0 {
				dy[i] = specialFloat32(rng)
			}
			oy, ox := (i%p)/ow, (i%p)%ow
			argmax[i] = int32((2*oy+rng.IntN(2))*w + 2*ox + rng.IntN(2))
			if rng.IntN(3) == 0 {
				argmax[i] = -1
			}
		}
		want := make([]float32, planes*h*w)
		got := make([]float32, len(want))
		for i := range got {
			got[i] = float32(rng.NormFloat64()) // every value must be written
		}
		for i, dx := range [][]float32{want, got} {
			UseAVX512 = i == 1
			for q := range planes {
				MaxPool2x2GradFloat32(dy[q*p:(q+1)*p], argmax[q*p:(q+1)*p], dx[q*h*w:(q+1)*h*w], w, oh, ow)
			}
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d×%d windows: dx[%d] bits %#x, want %#x", oh, ow, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}

// TestMaxPool2x2Float32 checks the 2×2 pools of a plane, with and
// without argmaxes, in AVX-512, in SSE2 and in Go, against a plain loop
// over each window that keeps its first maximum (the Go loop of package
// models/ops), bit for bit, outputs and argmaxes, on inputs full of
// ties, signed zeros, infinities and NaNs, and on random normals.
func TestMaxPool2x2Float32(t *testing.T) {
	defer func(wide bool) { UseAVX512 = wide }(UseAVX512)
	for _, tc := range []struct {
		special bool
		h, w    int
	}{
		// 7×11: the last row and column are in no window; 5 outputs a
		// row, one quad and one window after it. LeNet's pools: 14 and 5
		// outputs a row; then 8, quads only; 3, no quad.
		{true, 7, 11}, {false, 7, 11}, {true, 28, 28}, {true, 10, 10}, {true, 16, 17}, {true, 6, 6},
	} {
		oh, ow := tc.h/2, tc.w/2
		rng := rand.New(rand.NewPCG(21, 22))
		in := make([]float32, tc.h*tc.w)
		for i := range in {
			if tc.special {
				in[i] = specialFloat32(rng)
			} else {
				in[i] = float32(rng.NormFloat64())
			}
		}
		want, wantArg := make([]float32, oh*ow), make([]int32, oh*ow)
		for oy := range oh {
			for ox := range ow {
				best, at := float32(0), int32(-1)
				for _, q := range []int{2*oy*tc.w + 2*ox, 2*oy*tc.w + 2*ox + 1, (2*oy+1)*tc.w + 2*ox, (2*oy+1)*tc.w + 2*ox + 1} {
					if v := in[q]; v > best {
						best, at = v, int32(q)
					}
				}
				want[oy*ow+ox], wantArg[oy*ow+ox] = best, at
			}
		}
		ways := []string{"go"}
		if built {
			ways = append(ways, "sse2")
		}
		if avx512 {
			ways = append(ways, "avx512")
		}
		for _, way := range ways {
			UseAVX512 = way == "avx512"
			got, gotArg, values := make([]float32, oh*ow), make([]int32, oh*ow), make([]float32, oh*ow)
			if way == "go" {
				pool2x2Windows(in, got, gotArg, tc.w, oh, ow, 0, ow)
				pool2x2MaxWindows(in, values, tc.w, oh, ow, 0, ow)
			} else {
				MaxPool2x2Float32(in, got, gotArg, tc.w, oh, ow)
				MaxPool2x2ValuesFloat32(in, values, tc.w, oh, ow)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || gotArg[i] != wantArg[i] {
					t.Fatalf("%s: %d×%d, special %v, output %d: %v at %d, want %v at %d", way, tc.h, tc.w, tc.special, i, got[i], gotArg[i], want[i], wantArg[i])
				}
				if math.Float32bits(values[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: %d×%d, special %v, output %d without argmaxes: %v, want %v", way, tc.h, tc.w, tc.special, i, values[i], want[i])
				}
			}
		}
	}
}

// TestPooledEntriesFloat32 checks the AVX-512 pooled entries against the
// Go loop bit for bit: lengths 0 to 40, argmaxes −1 about half the time,
// gradients over 40 binades with infinities and NaNs now and then.
func TestPooledEntriesFloat32(t *testing.T) {
	if !RunsAVX512 {
		t.Skip("no AVX-512 here")
	}
	rng := rand.New(rand.NewPCG(49, 50))
	for n := range 41 {
		grad := wideFloat32s(rng, n, 4)
		argmax := make([]int32, n)
		for i := range argmax {
			argmax[i] = int32(rng.IntN(2000)) - 1
			if rng.IntN(2) == 0 {
				argmax[i] = -1
			}
		}
		wantV, wantArg := make([]float32, n), make([]float32, n)
		gotV, gotArg := make([]float32, n+16), make([]float32, n+16)
		PooledEntries(wantV, wantArg, grad, argmax)
		PooledEntriesFloat32(gotV, gotArg, grad, argmax)
		for i := range n {
			if math.Float32bits(gotV[i]) != math.Float32bits(wantV[i]) || math.Float32bits(gotArg[i]) != math.Float32bits(wantArg[i]) {
				t.Fatalf("%d outputs: entry %d: %v, %#x, want %v, %#x", n, i, gotV[i], math.Float32bits(gotArg[i]), wantV[i], math.Float32bits(wantArg[i]))
			}
		}
		for i := n; i < len(gotV); i++ {
			if gotV[i] != 0 || gotArg[i] != 0 {
				t.Fatalf("%d outputs: entry %d written", n, i)
			}
		}
	}
}
