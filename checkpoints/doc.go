// Package checkpoints will save and restore training runs: a directory with
// a JSON manifest (format version, every setting needed to rebuild the run,
// SHA-256 of each binary file) and the particles' parameters and optimiser
// state, written atomically so that a crash never leaves an unreadable
// checkpoint. It arrives with exact resume and `eval -ckpt DIR` (issue 5).
package checkpoints
