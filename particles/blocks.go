package particles

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// blockSize is the number of coordinates a rule treats at a time when it
// streams over long vectors: 2,048 float64s, so that a few vectors' blocks
// stay in the core's cache while every vector is read once.
const blockSize = 2048

// blockBuffers are one goroutine's scratch rows for parallelBlocks.
type blockBuffers struct {
	buf     []float64
	rows    [][]float64
	gram    []float64   // a block's Gram matrix (MTSGD)
	out     []float64   // a block's directions (MTSGD)
	cols    [][]float64 // each target's columns (normalised scores)
	colRows [][]float64 // their first w
}

// get returns n rows of length w ≤ blockSize, with room for three more
// after them in b.buf (asm.Gram reads rows four at a time).
func (b *blockBuffers) get(n, w int) [][]float64 {
	if len(b.buf) < (n+3)*w {
		b.buf = make([]float64, (n+3)*w) // the first block is the widest
	}
	if cap(b.rows) < n {
		b.rows = make([][]float64, n)
	}
	b.rows = b.rows[:n]
	for i := range b.rows {
		b.rows[i] = b.buf[i*w : (i+1)*w]
	}
	return b.rows
}

// columns returns every target's columns (see scoreSet.columns) on the
// block [lo, lo+w), or nil when the scores are not normalised.
func (b *blockBuffers) columns(s scoreSet, lo, w int) [][]float64 {
	if !s.normalize {
		return nil
	}
	b.cols = grow(b.cols, s.targets(), blockSize)
	if len(b.colRows) != len(b.cols) {
		b.colRows = make([][]float64, len(b.cols))
	}
	for t, c := range b.cols {
		b.colRows[t] = s.columns(t, lo, w, c)
	}
	return b.colRows
}

// parallelBlocks calls f on the blocks [lo, hi) of blockSize coordinates
// of 0..d-1, on GOMAXPROCS goroutines when there are many, each with
// scratch of its own: bufs, kept by the caller from call to call. f must
// write only what belongs to its block.
func parallelBlocks(d int, bufs *[]blockBuffers, f func(lo, hi int, buf *blockBuffers)) {
	blocks := (d + blockSize - 1) / blockSize
	workers := max(1, min(runtime.GOMAXPROCS(0), blocks/8))
	if len(*bufs) < workers {
		*bufs = append(*bufs, make([]blockBuffers, workers-len(*bufs))...)
	}
	onWorkers(blocks, workers, func(w, b int) {
		lo := b * blockSize
		f(lo, min(d, lo+blockSize), &(*bufs)[w])
	})
}

// parallelItems calls f(i) for i in [0, n): on GOMAXPROCS goroutines when
// wide (items long enough to be worth a goroutine), else in order on the
// caller's. f must write only what belongs to item i.
func parallelItems(n int, wide bool, f func(i int)) {
	workers := 1
	if wide {
		workers = runtime.GOMAXPROCS(0)
	}
	onWorkers(n, workers, func(_, i int) { f(i) })
}

// onWorkers calls f(w, i) for each i in [0, n), taken in turn by
// min(workers, n) goroutines w (the caller's alone, in order, for one).
func onWorkers(n, workers int, f func(w, i int)) {
	workers = min(workers, n)
	if workers < 2 {
		for i := range n {
			f(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(w, i)
			}
		}()
	}
	wg.Wait()
}
