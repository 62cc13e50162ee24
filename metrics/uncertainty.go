package metrics

import (
	"fmt"
	"math"
	"slices"
)

// An ensemble's disagreement on one example: the predictive entropy H[p̄]
// of the mean prediction p̄ splits into the expected entropy E_i H[p_i] of
// its members (the noise each member sees, aleatoric) and the mutual
// information H[p̄] − E_i H[p_i] between the prediction and the member
// (their disagreement, epistemic). Depeweg et al., "Decomposition of
// uncertainty in Bayesian deep learning" (ICML 2018) give the split;
// inputs unlike the training data should score high on the second.

// Entropy is −Σ p log p in nats, with 0·log 0 = 0.
func Entropy(p []float64) float64 {
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// Disagreement is the ensemble's class probabilities for one example
// and what its members' spread says of them.
type Disagreement struct {
	Label                                   int
	Confidence                              float64
	Predictive, Expected, MutualInformation float64
}

// Disagree computes, from the members' probabilities ps[i] for one
// example, the ensemble's mean into mean and its label, confidence and
// entropies. The mutual information is clamped at 0: it is never
// negative but for rounding.
func Disagree(mean []float64, ps [][]float64) Disagreement {
	Mean(mean, ps)
	var d Disagreement
	for c, v := range mean {
		if v > mean[d.Label] {
			d.Label = c
		}
	}
	d.Confidence = mean[d.Label]
	d.Predictive = Entropy(mean)
	for _, p := range ps {
		d.Expected += Entropy(p)
	}
	d.Expected /= float64(len(ps))
	d.MutualInformation = max(0, d.Predictive-d.Expected)
	return d
}

// AUROC is the area under the ROC curve of a score that should be higher
// on the positives than on the negatives: the probability that a random
// positive scores above a random negative, ties counted half (the
// Mann-Whitney U statistic over n·m). 0.5 is chance, 1 a perfect
// separation. It sorts the scores once, so it takes O((n+m) log(n+m)).
func AUROC(negatives, positives []float64) (float64, error) {
	n, m := len(negatives), len(positives)
	if n == 0 || m == 0 {
		return 0, fmt.Errorf("metrics: AUROC of %d negatives and %d positives", n, m)
	}
	type scored struct {
		v   float64
		pos bool
	}
	all := make([]scored, 0, n+m)
	for _, v := range negatives {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("metrics: AUROC: a negative's score is NaN")
		}
		all = append(all, scored{v, false})
	}
	for _, v := range positives {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("metrics: AUROC: a positive's score is NaN")
		}
		all = append(all, scored{v, true})
	}
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	// Walk groups of equal scores: each positive beats every negative
	// below its group and ties half of those in it.
	var wins float64
	below := 0 // negatives below the current group
	for i := 0; i < len(all); {
		j, negs, poss := i, 0, 0
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			if all[j].pos {
				poss++
			} else {
				negs++
			}
		}
		wins += float64(poss) * (float64(below) + 0.5*float64(negs))
		below += negs
		i = j
	}
	return wins / (float64(n) * float64(m)), nil
}
