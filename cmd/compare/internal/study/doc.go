// Package study turns a comparison's finished runs into compare's tables
// and charts: a comparison's table per method and task (WriteComparison),
// and a study's tables of assessed checkpoints with their verdicts
// (WriteStudy). Both set MT-SGD against the best other method per task
// and metric by one rule, the seed spread (verdict.go), so that the
// READMEs' sentences follow from the result files and not from a reading
// of them; and both give each method's Δm % against single-task training,
// the literature's one figure per method (deltam.go).
//
// The package reads no run directory and trains nothing: cmd/compare
// collects the runs' histories and assessments, and hands them here.
package study
