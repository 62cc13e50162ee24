package optim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Schedule gives the learning rate of each epoch (0-based).
type Schedule interface {
	LR(epoch int) float64
}

// Constant keeps the learning rate fixed.
type Constant float64

func (c Constant) LR(int) float64 { return float64(c) }

// MultiStep multiplies the base rate by Gamma at each milestone epoch, as
// torch.optim.lr_scheduler.MultiStepLR: with milestones 15, 30 and gamma
// 0.5, epochs 0-14 use Base, 15-29 Base/2, 30 on Base/4. Milestones count
// epochs from 0, as PyTorch's scheduler stepped once per epoch does.
type MultiStep struct {
	Base       float64
	Milestones []int
	Gamma      float64
}

func (s MultiStep) LR(epoch int) float64 {
	passed := 0
	for _, m := range s.Milestones {
		if epoch >= m {
			passed++
		}
	}
	return s.Base * math.Pow(s.Gamma, float64(passed))
}

// Exponential multiplies the base rate by Gamma every Every epochs, as
// torch.optim.lr_scheduler.StepLR (Every = 1: ExponentialLR).
type Exponential struct {
	Base  float64
	Gamma float64
	Every int
}

func (s Exponential) LR(epoch int) float64 {
	return s.Base * math.Pow(s.Gamma, float64(epoch/max(1, s.Every)))
}

// ParseMilestones reads a comma-separated list of increasing epochs, such
// as "15,30,45"; the empty string is no milestones.
func ParseMilestones(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || m < 1 {
			return nil, fmt.Errorf("milestone %q is not a positive epoch number", f)
		}
		out = append(out, m)
	}
	if !slices.IsSorted(out) {
		return nil, fmt.Errorf("milestones %v are not increasing", out)
	}
	return out, nil
}
