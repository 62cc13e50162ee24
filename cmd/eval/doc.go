// Command eval scores a trained ensemble from its checkpoint, without
// retraining: it rebuilds the data set and the networks that the
// checkpoint's settings describe, loads the particles, and evaluates them.
//
// Usage:
//
//	eval -ckpt DIR [flags]
//
// DIR is a checkpoint directory (RUN/last or RUN/best, written by train) or
// a run's output directory, which stands for RUN/last.
//
// Flags:
//
//	-ckpt DIR           checkpoint to evaluate (required)
//	-split NAME         test, valid (data sets with a validation split)
//	                    or train (default test)
//	-limit N            evaluate the first N examples of the split (default:
//	                    the run's -test-limit or -train-limit; 0: all)
//	-json               print one JSON object instead of the table
//	-reliability DIR    write a reliability diagram per task to
//	                    DIR/reliability-TASK.png; DIR (or the nearest
//	                    directory above it) must be a directory eval can
//	                    write in, checked before anything loads (status
//	                    2); the diagrams are all written or none, and a
//	                    DIR eval made goes with them
//	-data-dir DIR       where data sets are looked for (default
//	                    $MTSGD_DATA_DIR, else ~/.cache/mtsgd)
//	-data DIR           a run on your own files (-dataset files): read
//	                    them from DIR, where the directory the checkpoint
//	                    records has moved to
//	-workers N          graphs run at once (default GOMAXPROCS)
//	-device D           cpu (default) or cuda: predict on the first GPU (a
//	                    binary built with -tags gpu); the figures agree
//	                    with the CPU's to rounding
//
//	-temperature        report the temperature-scaled ensemble beside the
//	                    raw one (default true; -temperature=false: raw only)
//	-ood DATASET        also score out-of-distribution detection: the
//	                    test split against DATASET's test inputs (same
//	                    input shape and tasks, e.g. multi-fashion for a
//	                    multi-mnist run), by AUROC. A built-in data set
//	                    only (not files); the name, the run's own data
//	                    set, another number of tasks and a run on your
//	                    own files are refused before anything loads
//	                    (status 2); fewer than 100 examples on a side
//	                    (-limit) give a warning
//
// The table has one row per task: each particle's accuracy, then the
// ensemble's accuracy, Brier score, ECE, NLL and mean confidence minus
// accuracy (above 0 over-confident, below under-confident; the ensemble
// predicts the mean of its particles' probabilities); for a regression
// task each particle's MSE and the MSE of the ensemble's mean prediction.
//
// Temperature scaling: a classification task's row is followed by the
// same scores of the ensemble's probabilities at temperature T,
// softmax(log p̄ / T), T fitted to minimise the validation split's NLL
// (metrics.FitTemperature). The checkpoint records the temperatures
// training fitted at its epoch; for a checkpoint that records none, eval
// fits them on the validation split itself and says so, as predict does.
// The test split never takes part in a fit; a run without a validation
// split of at least 100 examples has no temperature. A regression task's
// temperature is 1 (a checkpoint recording another is refused); one at
// the bound of the search (0.05 or 20), where the fit found no minimum,
// is warned about. -json gives them as "temperatures" and the scaled
// scores as "calibrated".
//
// Out-of-distribution detection (-ood): every example of both test
// splits gets the ensemble's predictive entropy and its mutual
// information (predictive minus expected entropy: how much the particles
// disagree), summed over the tasks and per task, on the raw
// probabilities; a higher score should mean out of distribution. eval
// prints the AUROC of each score (0.5 chance, 1 perfect separation);
// -json gives them as "ood". The evaluation of a checkpoint's
// test split reproduces, to the last digit, the figures its training run
// printed for that epoch.
//
// A run on your own files is evaluated on the files it trained on: the
// checkpoint records the SHA-256 of each file (and of tasks.json), and a
// file whose content has changed since, or is missing or new, is refused
// by name (status 1), as is a difference in what the training split
// decided (input shape, tasks, normalisation), by the field. A
// checkpoint written before the hashes were recorded is compared by
// that spec alone, with a warning.
//
// A checkpoint whose parameters or scores are not finite (NaN or ±Inf: a
// run that diverged) is still evaluated and reported as far as it can be:
// the table prints NaN, -json writes each non-finite score as null (JSON
// has no NaN), and -reliability leaves out the bins whose figures are not
// finite. eval then says which parameters or scores are not finite and
// exits with status 6.
//
// Exit statuses (the same table for every command, docs/what-can-go-wrong.md):
// 0 done; 1 error (no checkpoint, missing data, data changed since
// training, …); 2 bad command line; 3 interrupted by SIGINT or SIGTERM,
// nothing written; 6 the checkpoint has diverged (see above).
//
// Example:
//
//	eval -ckpt runs/mm1 -json
package main
