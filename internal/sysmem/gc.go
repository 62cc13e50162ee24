package sysmem

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target the commands run with
// (see CollectEarly).
const GCPercent = 10

// CollectEarly sets the garbage collector to collect once the heap has
// grown by GCPercent percent since the last collection, instead of Go's
// default 100, unless $GOGC is set (the user's choice stands).
//
// A training run's heap is mostly the ensemble's vectors (parameters,
// scores, optimiser state), which live for the whole run and hold no
// pointers, so marking them costs little; a step makes little garbage,
// but a checkpoint or an evaluation makes copies as large as a particle.
// With the default target those copies would grow the heap to twice
// the ensemble before a collection, which for ResNet-18 particles is
// gigabytes of memory holding only garbage.
func CollectEarly() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}
