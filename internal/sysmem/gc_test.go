package sysmem

import (
	"runtime/debug"
	"testing"
)

// CollectEarly lowers the collector's target unless $GOGC is set.
func TestCollectEarly(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	for _, c := range []struct {
		gogc string
		want int
	}{{"", GCPercent}, {"100", 100}, {"off", 100}} {
		t.Setenv("GOGC", c.gogc)
		debug.SetGCPercent(100)
		CollectEarly()
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC=%q: target %d%%, want %d%%", c.gogc, got, c.want)
		}
	}
}
