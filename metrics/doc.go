// Package metrics will score ensembles of classifiers and regressors per
// task: accuracy, Brier score, expected calibration error (10 equal-width
// bins) and negative log-likelihood for each particle and for the ensemble
// (the mean of the particles' predicted probabilities), and mean squared
// error for regression tasks. It arrives with network training (issue 4);
// the toy problems of package particles/toy report their own figures.
package metrics
