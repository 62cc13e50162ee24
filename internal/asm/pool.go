package asm

import "math"

// The 2×2 max-pool of float32 planes (windows of stride 2, LeNet's), with
// ReLU before it, without branches on the data: a window's maximum and
// argmax are picked by comparing the values' bits as integers (which
// orders non-negative floats as their values) and selecting with masks.
// The comparisons' branches, taken at random, made the loop 1.4 times as
// slow. Four windows at a time are compared in SSE2 registers
// (pool_amd64.s), eight with AVX-512 (pool512_amd64.s), the rest of a
// row in Go. A value only wins if it is greater than the best so far,
// and a NaN or a value ≤ 0 never is: the results are those of a plain
// loop over the window that keeps the first maximum, bit for bit, NaNs
// included.

// MaxPool2x2Float32 pools one plane in (w columns, at least 2·oh rows,
// 2·ow ≤ w) into its oh·ow outputs out and their argmaxes arg: each
// output the largest of its window's values, or +0 where none is
// positive, and arg the index in the plane of the first value that is
// it, or −1 for +0.
func MaxPool2x2Float32(in, out []float32, arg []int32, w, oh, ow int) {
	if UseAVX512 {
		pool2x2OctsFloat32(in, out, arg, w, oh, ow)
		return
	}
	quads := ow / 4 * 4
	if quads > 0 {
		if built {
			pool2x2QuadsFloat32(in, out, arg, w, oh, ow)
		} else {
			pool2x2Windows(in, out, arg, w, oh, ow, 0, quads)
		}
	}
	if quads < ow {
		pool2x2Windows(in, out, arg, w, oh, ow, quads, ow)
	}
}

// MaxPool2x2ValuesFloat32 is MaxPool2x2Float32 without the argmaxes: each
// window's largest value's bits, a negative value or a NaN counting as
// +0, which gives the same outputs bit for bit.
func MaxPool2x2ValuesFloat32(in, out []float32, w, oh, ow int) {
	quads := ow / 4 * 4
	if quads > 0 {
		if built {
			pool2x2QuadsMaxFloat32(in, out, w, oh, ow)
		} else {
			pool2x2MaxWindows(in, out, w, oh, ow, 0, quads)
		}
	}
	if quads < ow {
		pool2x2MaxWindows(in, out, w, oh, ow, quads, ow)
	}
}

// pool2x2Windows is MaxPool2x2Float32 on one plane (w columns) for the
// outputs of columns from ≤ ox < to of each of its oh rows of ow.
func pool2x2Windows(in, out []float32, arg []int32, w, oh, ow, from, to int) {
	for oy := range oh {
		top := 2 * oy * w
		r0, r1 := in[top:top+2*to], in[top+w:top+w+2*to]
		o, a := out[oy*ow:oy*ow+to], arg[oy*ow:oy*ow+to]
		for ox := from; ox < to; ox++ {
			j := 2 * ox
			best, at := int32(0), int32(-1)
			best, at = greaterBits(best, at, r0[j], int32(top+j))
			best, at = greaterBits(best, at, r0[j+1], int32(top+j+1))
			best, at = greaterBits(best, at, r1[j], int32(top+w+j))
			best, at = greaterBits(best, at, r1[j+1], int32(top+w+j+1))
			o[ox], a[ox] = math.Float32frombits(uint32(best)), at
		}
	}
}

// greaterBits returns (v's bits, i) if v > the float whose bits are best
// (non-negative, at most +Inf's), and (best, at) otherwise. A negative v
// or a NaN counts as 0, which never wins.
func greaterBits(best, at int32, v float32, i int32) (int32, int32) {
	b := reluBits(v)
	m := (best - b) >> 31 // all ones iff b > best
	return best ^ ((best ^ b) & m), at ^ ((at ^ i) & m)
}

// pool2x2MaxWindows is MaxPool2x2ValuesFloat32 on one plane (w columns)
// for the outputs of columns from ≤ ox < to of each of its oh rows of ow.
func pool2x2MaxWindows(in, out []float32, w, oh, ow, from, to int) {
	for oy := range oh {
		top := 2 * oy * w
		r0, r1 := in[top:top+2*to], in[top+w:top+w+2*to]
		o := out[oy*ow : oy*ow+to]
		for ox := from; ox < to; ox++ {
			j := 2 * ox
			m := max(reluBits(r0[j]), reluBits(r0[j+1]), reluBits(r1[j]), reluBits(r1[j+1]))
			o[ox] = math.Float32frombits(uint32(m))
		}
	}
}

// reluBits is v's bits as an integer, which orders non-negative floats
// as their values, with a negative v or a NaN as 0 (+0's bits).
func reluBits(v float32) int32 {
	b := int32(math.Float32bits(v))
	b &^= b >> 31                // negative (sign bit set): 0
	b &^= (0x7f800000 - b) >> 31 // NaN (above +Inf's bits): 0
	return b
}

// MaxPool2x2GradFloat32 sets one plane's gradient dx of 2×2 windows with
// stride 2 that cover it exactly (w = 2·ow columns, 2·oh rows) to +0 plus
// each output's gradient dy at its argmax arg (none at −1). With
// UseAVX512 each of dx's values is set once, to +0 plus its window's
// gradient where it is the window's argmax and to +0 elsewhere: the bits
// of the Go loop, which clears the plane and adds into it.
func MaxPool2x2GradFloat32(dy []float32, arg []int32, dx []float32, w, oh, ow int) {
	if UseAVX512 {
		pool2x2GradFloat32(dy, arg, dx, w, oh, ow)
		return
	}
	clear(dx)
	for i, at := range arg {
		if at >= 0 {
			dx[at] += dy[i]
		}
	}
}

// PooledEntries writes a plane's pool outputs' entries for a
// convolution's gradient read from its pool's (ConvPoolTaps): v[q] =
// grad[q] and arg[q] = argmax[q] (as float32 bits) where the output has
// an argmax, both zero where the ReLU stopped its gradient (argmax −1),
// without a branch on it: it goes either way at random.
func PooledEntries(v, arg, grad []float32, argmax []int32) {
	v, arg = v[:len(argmax)], arg[:len(argmax)]
	grad = grad[:len(argmax)]
	for q, a := range argmax {
		keep := uint32(^(a >> 31)) // all ones where a ≥ 0
		v[q] = math.Float32frombits(math.Float32bits(grad[q]) & keep)
		arg[q] = math.Float32frombits(uint32(a) & keep)
	}
}

// PooledEntriesFloat32 is PooledEntries, sixteen pool outputs at a time
// with RunsAVX512: the same values.
func PooledEntriesFloat32(v, arg, grad []float32, argmax []int32) {
	if RunsAVX512 {
		pooledEntriesFloat32(v, arg, grad, argmax)
		return
	}
	PooledEntries(v, arg, grad, argmax)
}

// PooledEntriesInOrder is PooledEntries taking the pool outputs in the
// given order.
//
//go:noinline
func PooledEntriesInOrder(v, arg, grad []float32, argmax []int32, order []int32) {
	v, arg = v[:len(order)], arg[:len(order)]
	for j, q := range order {
		a := argmax[q]
		keep := uint32(^(a >> 31))
		v[j] = math.Float32frombits(math.Float32bits(grad[q]) & keep)
		arg[j] = math.Float32frombits(uint32(a) & keep)
	}
}
