package study

import (
	"fmt"
	"math"
)

// stat is a mean and sample standard deviation over seeds.
type stat struct {
	Mean, SD float64
	N        int
}

func newStat(v []float64) stat {
	s := stat{N: len(v)}
	for _, x := range v {
		s.Mean += x / float64(len(v))
	}
	if len(v) > 1 {
		for _, x := range v {
			s.SD += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(s.SD / float64(len(v)-1))
	}
	return s
}

func (s stat) String() string {
	if s.N < 2 {
		return fmt.Sprintf("%.4f", s.Mean)
	}
	return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.SD)
}

// percent prints s scaled to percent, two decimals.
func (s stat) percent() string {
	if s.N < 2 {
		return fmt.Sprintf("%.2f", 100*s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", 100*s.Mean, 100*s.SD)
}
