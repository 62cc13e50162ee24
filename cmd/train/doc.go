// Command train moves an ensemble of particles towards several targets with
// MT-SGD (Phan et al., NeurIPS 2022) or one of its baselines: points on the
// paper's toy problems, or multi-task networks on its image data sets.
//
// Usage:
//
//	train -dataset NAME [flags]
//	train -data DIR [flags]
//
// Data sets:
//
//	mog3   three mixtures of two 2-D Gaussians (the paper's Section 4.1.1);
//	       particles start from N(0, 5·I)
//	zdt3   the two ZDT3 objectives on [0,1]^30 as targets exp(−f_k)
//	       (Section 4.1.2); particles start uniform on the box and are
//	       clipped to [1e-6, 1−1e-6] after every step
//	multi-mnist, multi-fashion, multi-fashion-mnist
//	       two-task 36×36 composites of MNIST and Fashion-MNIST images
//	       (Section 4.2), built from the raw IDX files (package
//	       data/multimnist); each particle is a LeNet (package
//	       models/lenet). Get the files with scripts/fetch-data.
//	sarcos SARCOS inverse dynamics (Section 4.4): 21 inputs, 7 torques as
//	       7 regression tasks, from DATA/sarcos/sarcos_inv.mat and
//	       sarcos_inv_test.mat (package data/sarcos); each particle is an
//	       MLP 21→256→256→256 with one linear head per task (package
//	       models/mlp), trained on the mean squared error. Best checkpoint
//	       by validation MSE.
//	celeba CelebA face attributes (Section 4.3): binary tasks from
//	       DATA/celeba in the official layout (img_align_celeba/,
//	       list_attr_celeba.txt, list_eval_partition.txt; package
//	       data/celeba), images resized to 64×64; each particle is the
//	       paper's ResNet-18 trunk (-model resnet18-cifar: 3×3 stem, no
//	       max-pool, 2,048 features) with batch normalisation and one
//	       linear 2048→2 head per task (package models/resnet18;
//	       -model resnet18 is torchvision's layout). By default the main
//	       table's protocol: the first 10 attributes, the first 40,000
//	       training images. Best checkpoint by validation accuracy.
//	files  your own data, -data DIR: DIR/train.npz (optionally valid.npz
//	       and test.npz; arrays x, N×D or N×C×H×W, uint8 or float, and y,
//	       N×K, a column per task; or train.csv and so on, a column per
//	       feature and task) and DIR/tasks.json naming the tasks and
//	       their kinds (package data/files; docs/own-data.md). The
//	       inputs are standardised with the training split's statistics
//	       (tasks.json may say unit, x/255, or none), which the checkpoint
//	       records with DIR. The model is -model, else picked from the
//	       input shape: lenet for 1×36×36 images, resnet18 for 3×64×64,
//	       else mlp (images flattened). Without valid.npz, -valid
//	       examples (default a tenth) are held out at random (-seed);
//	       without test.npz the validation split is also the test split.
//	       Adam, lr 1e-3, batch 128, 30 epochs. Predict on new inputs
//	       with cmd/predict.
//
// Methods (-method) are those registered with package experiment (`go
// doc ./experiment Method`): train -h lists every one with its help line,
// mtsgd (trunks by MT-SGD, each task's heads by SVGD) the default, and
// names those that also move the toy problems' points (their rule needs
// only positions and scores); docs/training.md says what each built-in
// one does to trunks and heads. The data sets, their defaults and the
// models come from package experiment's registries too, the toy problems
// from package particles/toy's; the list of data sets above is checked
// against them.
//
// Flags for every data set:
//
//	-dataset NAME       data set (required, unless -data is given)
//	-method NAME        update rule (default mtsgd)
//	-particles M        number of particles (default 50 toy, 5 networks)
//	-lr RATE            learning rate (default 0.03 toy, 0.001 Multi-MNIST,
//	                    0.0001 SARCOS, 0.0005 CelebA)
//	-optimizer NAME     adam or sgd (default sgd on Multi-MNIST, else adam)
//	-momentum MU        SGD momentum (default 0.9); refused with adam
//	-kernel-scale S     multiplies the median-heuristic RBF bandwidth (default 1)
//	-repulsion RHO      weight of the kernel-gradient term; on networks, of
//	                    the trunks' rule (default 1 toy problems; networks:
//	                    the score scale's, see -score-scale)
//	-seed N             fixes data generation, initialisation and shuffling
//	                    (default 1)
//	-out DIR            output directory (default runs/DATASET-METHOD-seedN;
//	                    -data DIR: runs/NAME-HASH-METHOD-seedN, NAME the
//	                    last element of DIR, HASH 6 hex digits of the
//	                    SHA-256 of its absolute path)
//	-progress           progress bar on a terminal, else a log line every
//	                    tenth of the run or epoch (default true)
//
// Toy problems:
//
//	-steps N            optimiser steps (default 1000)
//
// Networks (defaults: the paper's setup for each data set; Multi-MNIST:
// SGD, lr 0.001, batch 256, 100 epochs, multistep; SARCOS: Adam, lr 1e-4,
// batch 512, 1000 epochs, constant rate; CelebA: Adam, lr 5e-4, batch 64,
// 100 epochs, the rate × 0.85 every 10 epochs):
//
//	-data DIR           train on the files in DIR (-dataset files, above)
//	-missing impute|drop|refuse
//	                    a missing CSV input ("", NA, NaN): impute (the
//	                    default) fills it from the training split (a
//	                    numeric column's median and a missing-indicator
//	                    input, a categorical one's "(missing)" category),
//	                    drop drops its row (predict lists it in
//	                    OUT.skipped.csv), refuse stops naming the cell
//	-na-values LIST     more CSV cells read as missing (e.g. None,null)
//	-id COLUMN          the CSV column carried to predict's outputs as
//	                    the row id (default: tasks.json's "id", a column
//	                    named id, else the unnamed index column)
//	-sep S, -standardize-targets=false
//	                    how -data's files are read (docs/own-data.md)
//	-model NAME         a registered model, train -h lists them (default:
//	                    the data set's; files: from the input shape); a
//	                    model that cannot take the data's shape or tasks
//	                    is status 2
//	-hidden LIST        -model mlp: hidden layer widths (default
//	                    256,256,256; a new -data run on vectors from
//	                    5,000 to 100,000 training rows: two layers as
//	                    wide as the input, 128 to 256)
//	-epochs N           passes over the training set (default 100 / 1000 / 100)
//	-batch N            examples per step (default 256 / 512 / 64)
//	-lr-schedule NAME   multistep, exponential or constant (default
//	                    multistep / constant / exponential)
//	-lr-milestones L    multistep: epochs at which the rate is multiplied by
//	                    -lr-gamma (default 15,30,45,60,75,90); refused
//	                    with another schedule
//	-lr-gamma G         factor of each decay (default 0.5; CelebA 0.85)
//	-lr-every N         exponential: epochs between decays (default 1;
//	                    CelebA 10)
//	-tasks SPEC         CelebA: the first N attributes ("10", "40") or
//	                    attribute names separated by commas, each once
//	                    (default 10)
//	-preset NAME        MT-SGD's choices where the paper and the authors'
//	                    code differ (default authors-params):
//	                      paper    Algorithm 1 as printed: kernels over the
//	                               parameters, four-term U, no warm-up,
//	                               batch-mean scores with repulsion 1/N (the
//	                               paper's posterior, its factor N in the
//	                               learning rate)
//	                      authors  the authors' code: kernels over the trunk's
//	                               features and the heads' outputs, heads
//	                               moved first, trunk scores normalised per
//	                               coordinate across particles, U's first
//	                               term only, one warm-up epoch, repulsion
//	                               0.0015 (trunk) and 0.25 (heads)
//	                      authors-params
//	                               authors with the kernels over the
//	                               parameters and one gradient evaluation
//	                               per step (a third of the step time);
//	                               the default, chosen on validation
//	                    A flag below given with a preset overrides that
//	                    choice alone; other methods than mtsgd take no
//	                    preset (batch-mean scores, no warm-up, kernels over
//	                    the parameters), and -preset with one is refused
//	                    (status 2). See docs/mtsgd-choices.md.
//	-kernel-on SPACE    params (the kernels compare the parameter vectors) or
//	                    outputs (the trunk's features and each head's outputs
//	                    on the batch; the repulsion goes back to the
//	                    parameters by one more backward pass; needs -u-terms
//	                    first with mtsgd)
//	-order O            joint (one gradient evaluation moves trunks and heads)
//	                    or heads-first (the heads move first and the trunks'
//	                    task gradients are taken through the moved heads: a
//	                    second gradient evaluation per step)
//	-score-scale S      mean (the gradient of the batch-mean loss), sum (times
//	                    N, the training set's size) or normalized (each task's
//	                    trunk scores divided per coordinate by their norm over
//	                    the particles); it also sets the repulsion defaults:
//	                    mean 1/N and 1/N, sum 1 and 1, normalized 0.0015 and
//	                    0.25 (trunk and heads)
//	-u-terms T          full (Equation Uij-1's four terms) or first (the
//	                    kernel-weighted score products only)
//	-warmup N           first N epochs without kernel: plain gradient steps,
//	                    each head its own task's, the trunk of particle i the
//	                    mix (i/(M−1)·task 1 + (1 − i/(M−1))·task 2)/M
//	                    (default: the preset's)
//	-head-repulsion RHO weight of the heads' kernel-gradient term (default:
//	                    the score scale's)
//	-valid N            Multi-* data sets: training composites held out for
//	                    validation, from source images no training composite
//	                    uses (default 10000; 0: none); best/ is chosen on them.
//	                    files without valid.npz: training examples held out
//	                    (default -1: a tenth)
//	-log-qp             mtsgd: log every step's min-norm QP (K, w*, duality
//	                    gap, certified)
//	-train-limit N      train on the first N training examples (default all;
//	                    CelebA 40000, the paper's subset; 0: all)
//	-test-limit N       evaluate on the first N test (and validation)
//	                    examples (default all)
//	-data-dir DIR       where data sets are looked for (default
//	                    $MTSGD_DATA_DIR, else ~/.cache/mtsgd)
//	-workers N          graphs run at once (default GOMAXPROCS)
//	-device D           where the networks compute: cpu (default) or cuda,
//	                    the first GPU, in a binary built with -tags gpu
//	                    (docs/gpu.md); there the ensemble stays in device
//	                    memory, stepped by the rules and optimisers that have
//	                    device forms, and evaluation runs too. Checkpoints
//	                    are the same files on either device, so a run
//	                    resumes on either. cuda in a build without the tag
//	                    is status 2, on a host without a usable GPU status
//	                    1, both with the reason
//	-dtype T            float32 or float64 graphs (default float32)
//	-preview FILE       write a 4×4 grid of training examples with their
//	                    labels to FILE (PNG) and exit
//	-stats              print both splits' sizes and label histograms and exit
//	                    (not with -preview)
//	-checkpoint-every N also save DIR/last every N steps (default 0: at the
//	                    end of each epoch only); the checkpoint records it,
//	                    and -resume without it keeps the run's
//	-best-metric NAME   the metric, averaged over tasks, that selects DIR/best
//	                    on the validation split: accuracy (higher is
//	                    better), nll, brier, ece or mse (lower is better),
//	                    or proper: each task's NLL (a regression task's
//	                    MSE) as a fraction of its epoch-1 value, the last
//	                    epoch on fewer than 100 validation examples
//	                    (default accuracy; SARCOS: mse; -data: proper,
//	                    docs/own-data.md). A classification
//	                    task counts by the metric (not under mse); a
//	                    regression task by its MSE under mse, else by its
//	                    Gaussian NLL at the estimated variance,
//	                    ½·log(2πe·MSE), which does not depend on the
//	                    targets' units. Without a validation split
//	                    (-valid 0), DIR/best is the last epoch: the test
//	                    split never chooses. The log says which rule a run
//	                    follows, and warns when the validation split has
//	                    fewer than 30 examples
//	-resume DIR         continue the run in DIR (or DIR/last) from DIR/last;
//	                    only -epochs (at least 1, to extend the run; fewer
//	                    than the run has done is refused, status 2),
//	                    -workers, -device, -data-dir, -progress,
//	                    -checkpoint-every, -best-metric and -data may be
//	                    given with it. A run on your own files resumes on
//	                    the files it trained on: the checkpoint records
//	                    each file's SHA-256 (and tasks.json's), and a file
//	                    changed, missing or new since is refused by name
//	                    (status 1); -data DIR names the directory the
//	                    files have moved to, the hashes deciding whether
//	                    they are the same. A DIR/last that is not the
//	                    run's (its settings or history differ from
//	                    DIR/best's: another run's, another data set's) is
//	                    refused, naming what differs (status 1); a copy
//	                    of DIR/best is the run's
//	-overwrite          train into a -out that holds a run (last/, best/ or
//	                    metrics.jsonl), deleting them when training starts;
//	                    without it such a -out is refused before any data
//	                    loads, and train says to give -resume DIR or another
//	                    -out
//
// Toy problems write DIR/particles.csv (header particle,theta_0,…, one row
// per particle, final positions) and DIR/particles.png (mog3: the particles
// over the three densities' contours; zdt3: the particles in objective space
// over the true Pareto front), and log where the particles ended.
//
// Networks are scored on the validation set (where there is one) and the
// test set after every epoch: one log line per split and task with the
// ensemble's accuracy, Brier score, ECE and NLL (the ensemble predicts the
// mean of the particles' probabilities), and one JSON object per split,
// task and epoch in DIR/metrics.jsonl, with every particle's scores too.
// The last epoch also logs each particle's scores. After every epoch the
// whole state goes to the checkpoint DIR/last, and to DIR/best when the
// epoch beats the one DIR/best holds (package checkpoints; evaluate one
// with eval -ckpt); epochs shorter than 10 s are saved together, at most
// every 10 s (the last epoch and an interruption always), the best
// epoch between two saves kept in memory for DIR/best. metrics.jsonl
// grows by each epoch's lines; curves.png is redrawn at most every 30 s
// and at the end. A failed save ends training with an error. A NaN or
// Inf in a loss, gradient or update direction stops training with an
// error naming the step, particle and task.
//
// Before it allocates a run, train estimates the least memory the run
// needs (the particles' vectors, the kernel matrices, the workers' graphs
// at -batch, the evaluation's predictions) and refuses one that exceeds
// this machine's memory (MemTotal in /proc/meminfo, or the cgroup's
// limit; $MTSGD_MEMORY, e.g. 24G, replaces the figure), naming the flag to
// lower and the estimate, with status 2. Networks are checked once their
// data has loaded.
//
// A run directory belongs to one process: train and train -resume lock
// DIR (the file DIR/.lock, which holds the owner's PID) until they end,
// and a second process on the same DIR fails at once, naming the PID. The
// kernel releases the lock of a process that dies, however it dies.
//
// SIGINT or SIGTERM during training saves DIR/last at the current step,
// loads it back, and exits with status 3; train -resume DIR continues
// exactly where it stopped, to the same parameters as a run never
// stopped. If that save fails (a full disk, say), train exits with status
// 4 and says what failed and which checkpoint, if any, is the last good
// one.
//
// Exit statuses (the same table for every command):
//
//	0  done
//	1  error (a refused or locked -out, missing data, data changed
//	   since the checkpoint, a failed save, ...)
//	2  bad command line, including a run too big for this machine's
//	   memory: the message names the flag to lower and the estimate
//	   (networks: once the data has loaded; a checkpoint whose settings
//	   are too big is status 1), a -valid larger than the data, a
//	   $MTSGD_MEMORY that is not a size, a -model that cannot take the
//	   data, and bad data: a file of -data DIR that is malformed or
//	   inconsistent (the message names the file, the array and the
//	   index)
//	3  interrupted; DIR/last is saved and verified: train -resume DIR
//	   (or interrupted while the data loaded, nothing written: rerun)
//	4  interrupted, and saving DIR/last failed; the message names the
//	   last good checkpoint
//	6  diverged: a NaN or Inf in a loss, gradient, update direction or
//	   score; the message names where, and what to lower
//
// docs/what-can-go-wrong.md says more.
//
// Examples:
//
//	train -dataset mog3 -method mtsgd -particles 50 -steps 1000 -lr 0.03 -seed 1 -out runs/mog3
//	train -dataset multi-mnist -particles 5 -epochs 3 -seed 1 -out runs/mm3
//	train -dataset multi-mnist -preset paper -out runs/mm-paper
//	train -dataset celeba -tasks 10 -particles 5 -out runs/celeba
//	train -data mydata -model mlp -hidden 128,128 -out runs/mine
package main
