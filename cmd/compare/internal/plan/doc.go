// Package plan is what a comparison is made of and how its finished runs
// are read back: the comparison as a plan of independent cells, one run
// each (Plan, New), the protocols that fix its budget (Protocols, with
// the paper's study PaperStudy and the tuned protocol's learning-rate
// search, Tuned and Search), the method specs it compares, the result
// file each finished run leaves (Result), and the aggregation of a
// plan's result files into compare's tables (Aggregate), which checks
// every file before it writes a table.
//
// The package trains nothing: cmd/compare runs the cells and writes
// their result files through it; package study turns what Aggregate
// collects into the tables and charts.
package plan
