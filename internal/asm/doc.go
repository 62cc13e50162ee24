// Package asm is the project's CPU routines in assembly, each with the Go
// it stands for: the products, convolutions, pools, runs of values,
// Winograd transforms and ReLU gradient of package models/ops, the
// negation of package engine, Adam's step of package optim, and the Gram
// matrices and widening of package particles.
//
// They live apart from the packages that use them, as gonum keeps its
// internal/asm/f32, so that the assembly, the Go forms that give the
// same bits, the reading of the processor's features and the switches
// that pick one or the other are in one place, and the packages above
// read as the algorithms they are: they ask which shapes the routines
// serve (serves.go), never which instructions the processor has. The
// package imports nothing of Gorgonia's or gonum's: its routines take
// slices and pointers.
//
// Each routine in assembly gives the bits of its Go form, which the
// tests here check on values chosen to break that (signed zeros,
// infinities, NaNs, subnormals, the masked tails of vectors); a routine
// whose sums are grouped otherwise than the Go loop a caller would use
// says so, and its tests bound the difference. The assembly is for
// amd64: on other architectures, and with -tags purego, the Go forms
// run and the switches are off (switches.go).
//
// The routines of gemm_amd64.s are written by a program, one for each
// tile or filter size (internal/gen, from the sizes of
// internal/limits), with the Go declarations of every routine of the
// package and the tables that pick them:
//
//	go generate ./internal/asm
package asm
