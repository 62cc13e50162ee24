// Command compare trains several methods on one data set under one budget
// and seed list, and tabulates their ensembles' test scores side by side.
//
// Usage:
//
//	compare -dataset NAME [flags]
//
// Every method is trained for every seed with the data set's defaults
// (those of train: go doc ./cmd/train) changed only by the flags below, so
// all methods see the same data, batches, optimiser and budget. A method
// is a train -method name, or mtsgd:PRESET for MT-SGD with one of train's
// presets (paper, authors, authors-params), either followed by settings
// of that method's own, @lr=RATE and @scale=mean|sum|normalized (its
// score scale), as in moo-svgd@scale=normalized, or a parameter of the
// method, @NAME=VALUE (train's -METHOD-NAME). The runs single@task=J, each
// training task J alone, make one row, single, in the tables: task J's
// figures from run J. Run METHOD-seedS goes to
// OUT/METHOD-seedS (":" written as "-", "@lr=" as "-lr", "@scale=" as "-"), a train output directory with metrics.jsonl, its
// chart curves.png and the checkpoints last/ and best/. A run already finished there is not
// redone, and an interrupted one is resumed: rerun the same command after
// a stop. A run directory made with other settings is an error rather
// than silently mixed in. The default methods are those registered as
// compared (go doc ./experiment Method), MT-SGD once per preset with the
// default preset first (DefaultMethods).
//
// The table has one row per method and task: the ensemble's accuracy, ECE
// (in percent), Brier score and NLL (MSE for regression) on the test set
// after the last epoch, as mean ± standard deviation over the seeds
// (sample deviation; none for a single seed), and the wall seconds per
// epoch (steps and evaluation, summed over resumes). On the Multi-* data
// sets the paper's ECE (its Table 2) and, where it can be read, its
// accuracy stand beside ours. Under it, a table gives each method's Δm %
// against single-task training (Maninis et al. 2019, as LibMTL reports
// it): the mean over the tasks of its relative gain over the method spec
// single on the task's test accuracy (MSE for regression, a fall in it
// counting as a gain), from the means over the seeds; positive is better
// than single-task, "—" where the comparison has no single run. The
// tables are printed and written to
// OUT/compare.md, as CSV to OUT/compare.csv, and for classification as a
// bar chart of accuracy and ECE per method and task, ours beside the
// paper's, to OUT/compare.png.
//
// Protocols (-protocol) fix the budget in one word; -epochs and -seeds
// given beside one override it:
//
//	reduced  5 epochs, seed 1: every method of the default list on
//	         Multi-MNIST in about 15 minutes each on 2 cores (the
//	         paper's optimiser and rate schedule, its first 5 epochs)
//	paper    100 epochs, seeds 1,2,3: the paper's protocol (3 runs)
//	paper-study
//	         100 epochs, the paper's protocol run to its end on a list
//	         of 17 runs, each a method spec and a seed (every seed-1
//	         run first; docs/results/paper-multi-mnist), and each
//	         finished run assessed (below)
//	tuned    every method at its own learning rate, chosen on the
//	         validation split: a search, then 3 epochs, seeds 1,2,3
//	         (below)
//	paper-celeba
//	         -dataset celeba only: the paper's 40-attribute CelebA
//	         table (its appendix) on the whole training split, 100
//	         epochs of the paper's ResNet-18 at CelebA's defaults (Adam
//	         5e-4, batch 64): MT-SGD, linear, uw, gradnorm and MGDA with
//	         seed 1, then MGDA with seeds 2-5, then single-task training
//	         as one run of single per attribute, on that attribute
//	         alone; -aggregate also
//	         writes OUT/attributes.md (test error and ECE per attribute
//	         and method, the paper's error beside ours) and
//	         OUT/radar.png (the error per attribute, easy attributes
//	         left and hard right, as the paper draws them)
//
// # The tuned protocol: each method at its best learning rate
//
// A comparison at one learning rate measures the rate as much as the
// methods. -protocol tuned first searches: every method trains once per
// candidate rate (-lrs, default 0.001,0.003,0.01,0.03; a kernel method
// without MT-SGD's presets, such as moo-svgd, also once per score scale,
// mean and normalized, since the scale sets its step as much as the
// rate), and then at each rate of -extend-lrs (default 0.1, 0.3) in turn
// while its best so far is the largest rate it tried (a choice at the
// grid's edge may not be the best; an extension not needed is recorded
// as such), -search-epochs epochs (default 2) on the first
// -search-train-limit training examples (default 55000, half of
// Multi-*'s), with the first seed. Each method's choice is the candidate
// with the lowest validation NLL averaged over the tasks (MSE for
// regression) after the search's last epoch, the lower rate when two are
// within 1e-4; a candidate that diverges is recorded and never chosen.
// Then every method trains at its choice for -epochs (default 3) and
// every seed (default 1,2,3). The test split is never read for a choice.
// The search runs go to OUT/search/METHOD-lrRATE[-SCALE], the final ones
// to OUT/METHOD-seedS; the tables name each method's choice, and OUT
// also gets search.md (every candidate's validation figures),
// summary.md (a line per method, a column per task and one of Δm %; then, per task and
// metric, MT-SGD against the best other method, and whether the gap is
// larger than the sum of their seed standard deviations) and
// compare-time.png (test NLL against seconds of training, mean ± sd over
// the seeds). Default methods: the compared ones, MT-SGD in the default
// preset alone (mtsgd:authors-params); -lr is refused (-lrs gives the
// candidates). docs/results-tuned.md has the protocol's budget and what
// it found on the Multi-* data sets.
//
// Flags:
//
//	-dataset NAME      network data set (required)
//	-protocol NAME     reduced, paper, paper-study, paper-celeba or tuned
//	                   (default: the data set's epochs, seed 1)
//	-model NAME        every run's model (default: the data set's)
//	-methods LIST      comma-separated (default: the compared methods,
//	                   MT-SGD once per preset; compare -h prints the list)
//	-seeds LIST        comma-separated seeds (default 1)
//	-epochs N          epochs per run (default: the data set's)
//	-lr RATE           learning rate (default: the data set's)
//	-optimizer NAME    sgd or adam for every method (default: the data set's)
//	-lrs LIST          -protocol tuned: candidate rates (default 0.001,0.003,0.01,0.03)
//	-extend-lrs LIST   -protocol tuned: rates above -lrs, each tried while a
//	                   method's best so far is the largest it tried
//	                   (default 0.1,0.3; "" none)
//	-search-epochs N   -protocol tuned: epochs of a search run (default 2)
//	-search-train-limit N
//	                   -protocol tuned: search runs train on the first N
//	                   examples (default 55000; 0: as the final runs)
//	-particles M       particles (default 5)
//	-train-limit N     train on the first N examples (default all)
//	-test-limit N      evaluate on the first N examples (default all)
//	-out DIR           where runs and tables go (default runs/compare-DATASET)
//	-data-dir DIR      data directory (default $MTSGD_DATA_DIR, else ~/.cache/mtsgd)
//	-workers N         graphs run at once (default GOMAXPROCS)
//	-device D          cpu (default) or cuda: train on the first GPU (a
//	                   binary built with -tags gpu; see train's -device);
//	                   with -slurm each task asks for one (--gres=gpu:1)
//
// OUT belongs to one process: compare locks it (the file OUT/.lock, which
// holds the owner's PID) until it ends, and each run directory while it
// trains or reads that run, so that a second compare on OUT, or a train
// -resume of one of its runs, fails at once naming the PID.
//
// # The paper study: assessed runs
//
// -protocol paper-study trains the methods at the paper's rate and at
// their tuned rates, with seeds 2 and 3 for MT-SGD, linear
// scalarisation and MOO-SVGD (plan.PaperStudy lists them); on a data set
// whose tasks a method cannot take (linear-pref weighs two; SARCOS has
// 7) that method's runs are left out, with a warning, and -methods
// naming it there is refused (status 2). When a run finishes,
// its checkpoints last/ and best/ are assessed into its result.json: the
// ensemble's test scores raw and after temperature scaling (eval's, the
// temperatures fitted on the validation split), and the AUROC with which
// its predictive entropy and mutual information tell the other Multi-*
// data set's test inputs (Multi-Fashion for Multi-MNIST) from its own.
// -aggregate then also writes OUT/study.md (every run at its last epoch,
// at best/, and at the epoch of its best test accuracy, the authors'
// rule, labelled as chosen on the test split; each method spec's Δm %
// against single-task training at those three; MT-SGD against the best
// other method of its rate, per task and metric; MT-SGD against each
// other method of its rate, and each method at its tuned rate against
// linear scalarisation at its tuned rate, a row per pair, Δm % among
// the metrics), OUT/study-readme.md
// (the tables of these the READMEs show, a test checking that they do)
// and OUT/study-calibration.png (test ECE and NLL per epoch on a log scale,
// mean and a band of ± sd over the seeds). A finished run whose checkpoints are gone cannot be
// assessed: keep last/ and best/ until its result.json holds its
// assessment.
//
// # Sweeps: one run per process, on a cluster
//
// A comparison is a plan, OUT/plan.json: its flags and its cells, one per
// run, numbered from 0 in the order compare runs them (the tuned
// protocol's search cells first; then seeds in -seeds order, methods in
// -methods order within a seed), each with its data set, method, seed,
// run directory and settings. A finished run leaves OUT/DIR/result.json,
// its settings and scores; -aggregate reads these, so the plan and the
// result files alone (a few kilobytes a run, without the checkpoints)
// rebuild the tables. Every compare writes the
// plan first; the cells can then run anywhere that sees OUT, each in its
// own process, and the tables be made once they are done:
//
//	-plan              write OUT/plan.json and stop; an OUT/plan.json of
//	                   another comparison (other than by cells appended) is
//	                   refused, status 2, unless -replace-plan
//	-cell I            run cell I of OUT/plan.json (needs -out; takes only
//	                   -data-dir, -workers and -device besides): trains it unless
//	                   finished, resumes it if interrupted; locks its run
//	                   directory, not OUT, so cells run at once; a final
//	                   cell of the tuned protocol refuses to run before
//	                   its method's search cells have finished
//	-aggregate         write compare.md, .csv and .png from the finished
//	                   cells of OUT/plan.json (needs -out), and
//	                   compare-curves.png: per task, each method's test
//	                   accuracy and ECE per epoch, mean ± standard deviation
//	                   over its seeds; with cells missing, compare.md lists
//	                   them (with the sbatch --array to rerun them) and
//	                   compare exits with status 5
//	-slurm             write the plan, OUT/sweep.sbatch (a Slurm job array,
//	                   --array=0-(N-1), task I running this compare binary
//	                   with -cell I, its logs in OUT/slurm/) and
//	                   OUT/sweep-job.yaml (a Kubernetes Indexed Job, pod I
//	                   running compare -cell $(JOB_COMPLETION_INDEX) on a
//	                   volume mounted at /sweep; written, not applied)
//	-submit            with -slurm: sbatch OUT/sweep.sbatch; print the job id
//	-slurm-cpus N      CPUs per cell, and each cell's -workers (default 2)
//	-slurm-mem SIZE    memory per cell, as sbatch --mem (default 8G)
//	-slurm-time T      time limit per cell, as sbatch --time (default 24:00:00)
//	-slurm-partition P partition (default: the cluster's)
//	-k8s-image IMAGE   the Job's image, compare on its PATH (default mtsgd:latest)
//
// The cycle, on a cluster whose nodes share OUT:
//
//	go build -o compare ./cmd/compare
//	./compare -dataset multi-mnist -protocol paper -out /shared/sweep -slurm -submit
//	squeue -j JOBID
//	./compare -aggregate -out /shared/sweep
//
// A finished cell is not redone, so a failed or cut-off sweep is completed
// by running its missing cells again (sbatch --array=LIST
// OUT/sweep.sbatch, as -aggregate prints), the whole array again, or a
// plain compare with the same flags in one process. Each array task
// receives SIGTERM two minutes before its time limit, and saves its
// run's last/ for the rerun to resume. docs/sweeps.md says more.
//
// Exit statuses (the same table for every command):
//
//	0  done
//	1  error (a locked OUT, a run with other settings, a failed save, ...)
//	2  bad command line, or runs too big for this machine's memory (the
//	   message names the flag to lower and the estimate; the data set
//	   loads before the check)
//	3  interrupted by SIGINT or SIGTERM, the running run's last/ saved and
//	   verified: rerun the same command to continue
//	4  interrupted, and saving the running run's last/ failed; the message
//	   names the last good checkpoint
//	5  -aggregate: some cells have not finished; the tables hold those
//	   that have, and list the others
//	6  a run diverged (outside a learning-rate search, where a
//	   diverged candidate is recorded and never chosen)
//
// docs/what-can-go-wrong.md says more.
//
// Examples, the paper's Multi-MNIST comparison on the reduced budget and
// in full:
//
//	compare -dataset multi-mnist -protocol reduced -out runs/compare-reduced
//	compare -dataset multi-mnist -protocol paper -out runs/compare-paper
//
// and the paper's CelebA table as a Slurm job array on GPU nodes, a cell
// per run (docs/data.md says where CelebA's files go, and what a cell
// needs on the CPU):
//
//	compare -dataset celeba -protocol paper-celeba -device cuda -out /shared/celeba -slurm -submit
package main
