package main

import (
	"fmt"
	"strings"

	"github.com/mtsgd/mtsgd/internal/asm/internal/limits"
)

// assembly returns gemm_amd64.s.
func assembly() string {
	var b strings.Builder
	b.WriteString(header + "//go:build !purego\n\n#include \"textflag.h\"\n\n")
	for r := 1; r <= limits.GemmRows; r++ {
		rowsRoutine(&b, r)
	}
	for _, t := range limits.GemmDots {
		dotsRoutine(&b, t[0], t[1])
	}
	for v := 1; v <= limits.TapVectors; v++ {
		for r := 1; r <= limits.TapRows(v); r++ {
			tapRowsRoutine(&b, v, r)
		}
	}
	for v := 1; v <= limits.TapDotsVectors; v++ {
		for _, t := range limits.TapDots {
			tapDotsRoutine(&b, v, t[0], t[1])
		}
	}
	for k := 1; k <= limits.PoolTaps; k++ {
		for r := 1; r <= limits.PoolTapsRows(k); r++ {
			poolTapsRoutine(&b, k, r)
		}
	}
	for o := 1; o <= limits.BackFilters; o++ {
		tapBackRoutine(&b, o)
	}
	for k := 1; k <= limits.PoolRowsTaps; k++ {
		for v := 1; v <= limits.PoolRowsVectors; v++ {
			poolRowsRoutine(&b, k, v)
			poolBackRoutine(&b, k, v)
		}
	}
	return b.String()
}

// asm collects a routine's lines.
type asm struct{ b *strings.Builder }

func (a asm) op(format string, args ...any) { fmt.Fprintf(a.b, "\t"+format+"\n", args...) }

func (a asm) label(l string) { fmt.Fprintf(a.b, "%s:\n", l) }

// lanes loads (or with load false stores) a dots routine's ra×rb
// accumulators, Z(r·5+s), from (into) their partial sums: row r's at
// base plus r times the bytes in row, entry s 64 bytes further each.
// It moves base.
func (a asm) lanes(ra, rb int, base, row string, load bool) {
	for r := range ra {
		for s := range rb {
			mem, z := offset(64*s, "("+base+")"), fmt.Sprintf("Z%d", r*5+s)
			if load {
				a.op("VMOVUPS %s, %s", mem, z)
			} else {
				a.op("VMOVUPS %s, %s", z, mem)
			}
		}
		if r < ra-1 {
			a.op("ADDQ %s, %s", row, base)
		}
	}
}

// offset is mem displaced by d bytes.
func offset(d int, mem string) string {
	if d == 0 {
		return mem
	}
	return fmt.Sprint(d) + mem
}
