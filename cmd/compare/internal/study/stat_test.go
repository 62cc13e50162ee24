package study

import (
	"fmt"
	"math"
	"math/big"
	"testing"
)

// The tables round a mean from its exact decimal value. Reference: the
// bottom-right test accuracies of linear scalarisation's three seeds at
// epoch 100 in docs/results/paper-multi-mnist (0.9517, 0.9484, 0.94795;
// 20,000 test examples) sum to 2.84805, a mean of exactly 0.94935, which
// rounds half away from zero to 0.9494; the floating-point running mean
// is 0.94934999… and prints 0.9493.
func TestMeanTextRoundsTheExactMean(t *testing.T) {
	s := newStat([]float64{0.9517, 0.9484, 0.94795})
	if float := fmt.Sprintf("%.4f", s.Mean); float != "0.9493" {
		t.Fatalf("the float mean prints %s: the reference case no longer shows the boundary", float)
	}
	if got := s.meanText(1, 4); got != "0.9494" {
		t.Errorf("meanText = %s, want 0.9494", got)
	}
	// Without the seeds' values (a stat made by hand), the float mean.
	if got := (stat{Mean: 0.25, N: 3}).meanText(100, 2); got != "25.00" {
		t.Errorf("hand-made stat: %s, want 25.00", got)
	}
	// A value that is not finite has no decimal: printed as a float.
	if got := newStat([]float64{1, math.Inf(1)}).meanText(1, 2); got != "+Inf" {
		t.Errorf("mean with +Inf: %s, want +Inf", got)
	}
}

// fixed's rounding and layout, each case worked by hand.
func TestFixed(t *testing.T) {
	for _, c := range []struct {
		num, den int64
		scale    float64
		digits   int
		want     string
	}{
		{94935, 100000, 1, 4, "0.9494"},   // a tie rounds away from zero
		{-94935, 100000, 1, 4, "-0.9494"}, // on both sides
		{94934, 100000, 1, 4, "0.9493"},
		{12, 10000, 1, 4, "0.0012"},    // leading zeros kept
		{-4, 100000, 1, 4, "0.0000"},   // rounds to zero: no minus sign
		{83, 10000, 100, 2, "0.83"},    // ECE 0.0083 in percent
		{1, 3, 100, 2, "33.33"},        // 33.333…
		{2, 3, 100, 2, "66.67"},        // 66.666…
		{1, 2, 1, 0, "1"},              // no decimals
		{123456, 1000, 1, 2, "123.46"}, // 123.456
	} {
		if got := fixed(big.NewRat(c.num, c.den), c.scale, c.digits); got != c.want {
			t.Errorf("fixed(%d/%d, %v, %d) = %s, want %s", c.num, c.den, c.scale, c.digits, got, c.want)
		}
	}
}
