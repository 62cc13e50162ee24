package main

import (
	"fmt"
	"strings"

	"github.com/mtsgd/mtsgd/internal/asm/internal/limits"
)

// The Go signatures of the generated routines, by kind.
const (
	rowsSig     = "(a *float32, lda int, b *float32, ldb int, c *float32, ldc, k, n int, addC bool)"
	dotsSig     = "(a *float32, lda int, b *float32, ldb int, part *float32, ldp, k int)"
	tapRowsSig  = "(w *float32, ldw int, x *float32, offs *int, k int, c *float32, ldc, masks, stepX, stepC int)"
	tapDotsSig  = "(gm *float32, ldg int, x *float32, offs *int, part *float32, ldp, images, rows, rowG, rowX, imageX, imageG, masks int)"
	tapBackSig  = "(grad *float32, ldg int, wt *float32, taps int, offs *int, dxs *float32, mask int)"
	poolTapsSig = "(v *float32, ldv int, arg *float32, entries, images int, x *float32, imageX, rowX int, dw *float32, lddw, divOW, skip int)"
	poolRowsSig = "(v *float32, arg *float32, entries, images int, x *float32, imageX, rowX int, dw *float32, divOW, skip, cBytes int)"
	poolBackSig = "(v *float32, arg *float32, entries int, w *float32, dx *float32, rowX, divOW, skip, cBytes int)"
)

// tables returns the Go file that puts the generated routines in tables
// by size, and declares the tables' types.
func tables() string {
	var b strings.Builder
	b.WriteString(header + "package asm\n\n")
	b.WriteString("import \"github.com/mtsgd/mtsgd/internal/asm/internal/limits\"\n\n")
	b.WriteString("// The generated routines of gemm_amd64.s by size (internal/limits), and\n// their types.\n\n")
	fmt.Fprintf(&b, "type (\n\trowsFunc     func%s\n\tdotsFunc     func%s\n\ttapRowsFunc  func%s\n\ttapDotsFunc  func%s\n\ttapBackFunc  func%s\n\tpoolTapsFunc func%s\n\tpoolRowsFunc func%s\n\tpoolBackFunc func%s\n)\n\n",
		rowsSig, dotsSig, tapRowsSig, tapDotsSig, tapBackSig, poolTapsSig, poolRowsSig, poolBackSig)

	b.WriteString("// rowsRoutines[r] computes r rows of C.\nvar rowsRoutines = [limits.GemmRows + 1]rowsFunc{nil")
	for r := 1; r <= limits.GemmRows; r++ {
		fmt.Fprintf(&b, ", gemmRows%d", r)
	}
	b.WriteString("}\n\n// dotsRoutines[shape] computes a Tile of four rows by five.\nvar dotsRoutines = [4]dotsFunc{")
	for i, t := range limits.GemmDots {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "gemmDots%dx%d", t[0], t[1])
	}
	b.WriteString("}\n\n// tapRowsRoutines[v][r] computes r rows of filters over v vectors.\nvar tapRowsRoutines = [limits.TapVectors + 1][limits.TapRowsMost + 1]tapRowsFunc{\n\t{},\n")
	for v := 1; v <= limits.TapVectors; v++ {
		b.WriteString("\t{nil")
		for r := 1; r <= limits.TapRows(v); r++ {
			fmt.Fprintf(&b, ", convTap%dRows%d", v, r)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n// tapDotsRoutines[v][shape] computes a Tile of five rows by five taps\n// over output rows of v vectors.\nvar tapDotsRoutines = [limits.TapDotsVectors + 1][4]tapDotsFunc{\n\t{},\n")
	for v := 1; v <= limits.TapDotsVectors; v++ {
		b.WriteString("\t{")
		for i, t := range limits.TapDots {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "convTap%dDots%dx%d", v, t[0], t[1])
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n// tapBackRoutines[o] computes the taps' gradients of o filters' output\n// gradients.\nvar tapBackRoutines = [limits.BackFilters + 1]tapBackFunc{nil")
	for o := 1; o <= limits.BackFilters; o++ {
		fmt.Fprintf(&b, ", convTapBack%d", o)
	}
	b.WriteString("}\n\n// poolTapsRoutines[k][r] computes the filter gradients of k×k taps of r\n// rows sharing their argmaxes from a pool's gradients.\nvar poolTapsRoutines = [limits.PoolTaps + 1][4]poolTapsFunc{\n\t{},\n")
	for k := 1; k <= limits.PoolTaps; k++ {
		b.WriteString("\t{nil")
		for r := 1; r <= limits.PoolTapsRows(k); r++ {
			fmt.Fprintf(&b, ", convPoolTaps%dx%d", k, r)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n// poolRowsRoutines[k][v] and poolBackRoutines[k][v] compute the filter\n// and input gradients of k×k filters over channels in v vectors from a\n// pool's gradients.\nvar (\n\tpoolRowsRoutines = [limits.PoolRowsTaps + 1][limits.PoolRowsVectors + 1]poolRowsFunc{\n\t\t{},\n")
	for k := 1; k <= limits.PoolRowsTaps; k++ {
		b.WriteString("\t\t{nil")
		for v := 1; v <= limits.PoolRowsVectors; v++ {
			fmt.Fprintf(&b, ", convPoolRows%dx%d", k, v)
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t}\n\tpoolBackRoutines = [limits.PoolRowsTaps + 1][limits.PoolRowsVectors + 1]poolBackFunc{\n\t\t{},\n")
	for k := 1; k <= limits.PoolRowsTaps; k++ {
		b.WriteString("\t\t{nil")
		for v := 1; v <= limits.PoolRowsVectors; v++ {
			fmt.Fprintf(&b, ", convPoolBack%dx%d", k, v)
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t}\n)\n")
	return b.String()
}
