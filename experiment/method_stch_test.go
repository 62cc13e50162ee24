package experiment

import (
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/particles/aggregate"
)

// stch: each trunk along its summed log losses' gradient in the warm-up
// epochs, computed by package aggregate from the step's gradients and
// losses (tested there against its references); each head along its own
// task's score.
func init() {
	stepCases["stch"] = aggregatedCase(false, func() aggregate.Aggregator { return &aggregate.STCH{} })
}

// -stch-warmup counts epochs: a fraction is refused naming the flag, and
// 0 (no warm-up epoch before the nadir epoch) is taken.
func TestSTCHWarmupIsWhole(t *testing.T) {
	s := testSettings(1)
	s.Method, s.MethodParams = "stch", map[string]float64{"warmup": 1.5}
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "-stch-warmup") || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("-stch-warmup 1.5: %v", err)
	}
	s.MethodParams["warmup"] = 0
	if err := s.Check(); err != nil {
		t.Errorf("-stch-warmup 0: %v", err)
	}
}
