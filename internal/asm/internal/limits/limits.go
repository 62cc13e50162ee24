// Package limits holds the sizes of the generated assembly's routines:
// which tiles, filters and rows a routine is written out for. The
// generator (internal/gen) writes one routine per size and package asm
// picks them from tables by size; both read the sizes here, so that the
// two cannot disagree.
//
// Each routine keeps its sums, inputs and operands in the 32 vector
// registers of AVX-512, which bounds its size.
package limits

// GemmRows is the most rows of C a GEMM rows routine computes at once:
// five rows of four vectors' sums and the vectors of B they read.
const GemmRows = 5

// GemmDots are the tiles of the GEMM dots routines, rows of A by rows of
// B, in the order of package asm's Tile: a whole tile, its column, its
// row, one entry.
var GemmDots = [4][2]int{{4, 5}, {4, 1}, {1, 5}, {1, 1}}

// TapVectors is the most vectors of 16 columns a tap rows routine
// computes for each row of filters: four output rows of up to 16, or one
// of up to 32 in two vectors.
const TapVectors = 4

// TapRowsMost is the most rows of filters any tap rows routine computes
// (TapRows of one or two vectors).
const TapRowsMost = 10

// TapRows is the most rows of filters a tap rows routine of v vectors
// computes at once: its v·rows sums, v vectors of input and two of
// filter values fit in the 32 registers.
func TapRows(v int) int {
	if v <= 2 {
		return TapRowsMost
	}
	return 20 / v
}

// TapDotsVectors is the most vectors of 16 columns a tap dots routine
// reads per output row.
const TapDotsVectors = 2

// TapDots are the tiles of the tap dots routines, rows of the output
// gradient by taps, in the order of package asm's Tile: five rows by
// five taps, and the one row or column of a tile that the rows or taps
// left over do not fill. Each row of a tile loads five vectors of the
// gradient and five of the input for 25 multiply-adds, where the
// routines' loads rather than their multiply-adds bound them.
var TapDots = [4][2]int{{5, 5}, {5, 1}, {1, 5}, {1, 1}}

// BackFilters is the most filters a tap back routine takes: their output
// gradients' vectors, eight taps' sums and one more fit in 32 registers.
const BackFilters = 22

// PoolTaps is the widest filter a pool taps routine takes: two rows' k
// sums each, a window row and the rows' two values fit in 32 registers.
const PoolTaps = 14

// PoolTapsRows is the most rows a pool taps routine of k×k filters takes:
// three where their sums, a window row and their three values fit in 32
// registers (k ≤ 9), else two.
func PoolTapsRows(k int) int {
	if 3*k+4 <= 32 {
		return 3
	}
	return 2
}

// The pool rows and pool back routines take k×k filters with k ≤
// PoolRowsTaps over window rows of v ≤ PoolRowsVectors vectors of 16
// values: their k·v sums or filter rows and two more fit in 32
// registers.
const (
	PoolRowsTaps    = 7
	PoolRowsVectors = 4
)
