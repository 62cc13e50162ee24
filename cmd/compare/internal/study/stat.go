package study

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// stat is a mean and sample standard deviation over seeds, with the
// seeds' values where it was made from them (newStat).
type stat struct {
	Mean, SD float64
	N        int
	vals     []float64
}

func newStat(v []float64) stat {
	s := stat{N: len(v), vals: v}
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

// exactMean is the mean of the seeds' values as decimals, exactly: each
// value as the shortest decimal that reads back as it (the figure the
// result file holds), their sum divided by their number in rational
// arithmetic. A mean summed in floating point can fall just short of a
// rounding boundary (0.9497, 0.9490 and 0.9493 sum to a mean of
// 0.94934999…, not 0.94935), and the tables would then round it down.
// Without the values (a stat made by hand), the float mean; ok is false
// where a value is not finite and has no decimal.
func (s stat) exactMean() (r *big.Rat, ok bool) {
	if len(s.vals) == 0 || len(s.vals) != s.N {
		return decimal(s.Mean)
	}
	sum := new(big.Rat)
	for _, x := range s.vals {
		d, ok := decimal(x)
		if !ok {
			return nil, false
		}
		sum.Add(sum, d)
	}
	return sum.Quo(sum, new(big.Rat).SetInt64(int64(len(s.vals)))), true
}

// decimal is x as the shortest decimal that reads back as x; ok is false
// for ±Inf and NaN.
func decimal(x float64) (*big.Rat, bool) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, false
	}
	return new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
}

// meanText prints scale × s's mean with digits decimals, from its exact
// value (exactMean) where it has one.
func (s stat) meanText(scale float64, digits int) string {
	r, ok := s.exactMean()
	if !ok {
		return fmt.Sprintf("%.*f", digits, scale*s.Mean)
	}
	return fixed(r, scale, digits)
}

// fixed prints scale × r with digits decimals, rounded half away from
// zero, as a table prints a figure; "-0.00" is printed "0.00".
func fixed(r *big.Rat, scale float64, digits int) string {
	sc, _ := decimal(scale)
	v := new(big.Rat).Mul(r, sc)
	v.Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil)))
	neg := v.Sign() < 0
	v.Abs(v)
	q, rem := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if rem.Lsh(rem, 1).Cmp(v.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	text := q.String()
	if digits > 0 {
		for len(text) <= digits {
			text = "0" + text
		}
		text = text[:len(text)-digits] + "." + text[len(text)-digits:]
	}
	if neg && q.Sign() != 0 {
		text = "-" + text
	}
	return text
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
