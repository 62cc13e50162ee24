// Command predict runs a trained ensemble on new inputs and writes, for
// every example and task, the ensemble's prediction and how much its
// particles disagree about it.
//
// Usage:
//
//	predict -ckpt DIR -data FILE.npz|FILE.csv -out FILE.csv [-out FILE.npz] [flags]
//
// DIR is a checkpoint of a run on your own files (train -data; RUN/best,
// RUN/last, or a run's directory for RUN/last). FILE.npz holds the inputs
// as an array x shaped as the training inputs were (N×D or N×C×H×W, or
// N×H×W for one channel; uint8 or float); a y array there is not read.
// Or FILE.csv holds them as the training CSV did: a header, one example
// per line, the input columns found by name; task columns are not read.
// The inputs are normalised as the run's training split was (the
// checkpoint records the transform), so the training files need not be
// at hand.
//
// Flags:
//
//	-ckpt DIR       checkpoint (required)
//	-data FILE      .npz or .csv file of inputs (required)
//	-out FILE       where to write: FILE.csv, FILE.npz, or both with -out
//	                given twice (required)
//	-chunk N        examples read and predicted at a time (default 4096):
//	                memory holds one chunk, whatever the file's size
//	-show FILE.png  draw the 16 examples with the highest mutual
//	                information, each with its index and the ensemble's
//	                labels and confidences (inputs of 1 or 3 channels;
//	                other inputs: a warning, and the predictions are
//	                written without the picture)
//	-show-task NAME the classification task -show ranks by (default: the
//	                first)
//	-workers N      graphs run at once (default GOMAXPROCS)
//	-device D       cpu (default) or cuda (a binary built with -tags gpu)
//	-temperature    apply the checkpoint's temperatures (default true)
//	-progress       progress bar on a terminal, else a log line every
//	                tenth of the work (default true)
//
// For a classification task with classes c = 0..C−1, where p_i is
// particle i's class probabilities (softmax) for the example and
// p̄ = mean_i p_i the ensemble's, it writes:
//
//	probs                 p̄, C columns (CSV: TASK/p0, TASK/p1, …)
//	label                 the first most probable class of p̄
//	confidence            p̄[label]
//	predictive_entropy    H[p̄] = −Σ_c p̄_c log p̄_c (nats)
//	expected_entropy      mean_i H[p_i]
//	mutual_information    H[p̄] − mean_i H[p_i], the particles'
//	                      disagreement: 0 when they agree, up to log M
//
// and for a regression task, in the targets' units:
//
//	mean                  the mean of the particles' predictions
//	spread                their standard deviation (over particles;
//	                      population): the particles' disagreement
//	std                   sqrt(spread² + σ²), σ² the validation MSE of
//	                      the ensemble's mean at the checkpoint's epoch:
//	                      the noise the spread leaves out (the spread
//	                      alone where the run has no validation split,
//	                      with a warning)
//
// Where the task's classes have names (tasks.json's class_names, or the
// string labels of a CSV), the CSV gives each label's name in a column
// TASK/class beside TASK/label. Where the input CSV names its rows (the
// run's id column, else an unnamed first column: pandas' index, R's row
// names), the CSV's second column is each row's id, and the NPZ holds
// them as the array id (NumPy Unicode strings). Inputs missing in a CSV
// are imputed as training imputed them (train -missing impute, the
// default), so every row is predicted; a run trained with -missing drop
// skips a row with a missing input and lists each skipped row's line and
// id in OUT.skipped.csv, beside the first -out (written with the others);
// one trained with -missing refuse stops at it. The probs are
// those eval's ensemble scores, after temperature scaling: where the
// checkpoint records temperatures (a run with a validation split of at
// least 100 examples fits one per task on it, go doc ./cmd/eval), probs
// and confidence are softmax(log p̄ / T), which keeps the label. A
// checkpoint of such a run that records none has them fitted on the
// run's validation split, loaded from its files, as eval does; where
// those cannot be loaded predict refuses (status 1) and
// -temperature=false gives the raw probabilities; the three entropies are
// always those of the particles' own probabilities. -temperature=false
// writes p̄ as it is. The CSV has a header and one row per
// example: index, then each task's columns, named TASK/probs's classes,
// TASK/label, and so on; numbers as Go's shortest exact form. The NPZ
// has one array per task and column: TASK/probs (N×C float64),
// TASK/label (N int64), TASK/confidence, … (N float64).
//
// The outputs are all written or none: each goes to a temporary file
// beside it, and all are renamed into place only once every one was
// written. Before anything is computed, an output that is the -data
// file (the same inode), lies in the checkpoint's data directory (beside
// its training files), is a directory, or whose directory cannot be
// written is refused.
//
// Exit statuses (the same table for every command,
// docs/what-can-go-wrong.md): 0 done; 1 error (an unreadable checkpoint, a failed
// write: nothing is written); 2 bad command line or bad input: a flag,
// an output refused as above, a checkpoint not of a run on -data files,
// or an input file that is malformed or does not fit the model (the
// message names the file, the array and the index); 3 interrupted by
// SIGINT or SIGTERM, nothing written.
//
// Example:
//
//	predict -ckpt runs/mine/best -data new.npz -out pred.csv -out pred.npz
package main
