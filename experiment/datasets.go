package experiment

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mtsgd/mtsgd/data/celeba"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/data/multimnist"
	"github.com/mtsgd/mtsgd/data/sarcos"
	"github.com/mtsgd/mtsgd/internal/registry"
)

// A Dataset is a data set networks train on, as -dataset names it: how
// to load it and the protocol the paper trains on it. The toy problems
// are not data sets (package particles/toy has their registry).
type Dataset struct {
	Name string
	// Load reads or builds the full splits from dir (data.Dir's answer)
	// as the settings say (seed, validation split, tasks; a loader may
	// apply the limits itself, to read less). Valid is nil where there
	// is no validation split.
	Load func(dir string, s Settings) (Data, error)
	// Model is the registered model the paper trains on it; "" picks
	// one from the input shape once the data has loaded (DefaultModel).
	Model string
	// Defaults changes, in the settings every network run starts from
	// (see Defaults), what the paper's protocol for this data set has
	// otherwise: epochs, batch, optimiser, schedule, tasks, limits, the
	// validation split. Nil: none.
	Defaults func(s *Settings)
	// Best is the metric (BestMetrics) that selects best/ by default.
	Best string
	// SmallData keeps a fitted temperature only where it is significant
	// (smallvalid.go): for data whose validation split may be small.
	SmallData bool
	// CheckTasks checks a -tasks spec as far as it can before loading;
	// nil for a data set whose tasks are fixed, where -tasks is refused.
	CheckTasks func(spec string) error
	// CheckValid checks -valid, the training examples held out for
	// validation, when not 0; nil for a data set that has its own
	// validation split (or none), where -valid must be 0.
	CheckValid func(n int) error
	// Tasks is how many tasks a run of settings s has, as far as is
	// known before the data load (0: not known); nil: not known.
	Tasks func(s Settings) int
}

// builtinDatasets are the paper's data sets and a user's own files, in
// the order of every list the commands print.
func builtinDatasets() []Dataset {
	var ds []Dataset
	for _, v := range multimnist.Variants {
		ds = append(ds, multiDataset(v))
	}
	return append(ds, sarcosDataset, celebADataset, filesDataset)
}

// datasets is the registry of data sets. The built-ins are registered
// while the package's variables are initialised, before any data set an
// init function registers (as methods are).
var datasets = newDatasets(builtinDatasets())

// newDatasets returns a registry holding ds in their order.
func newDatasets(ds []Dataset) *registry.Registry[Dataset] {
	r := registry.New[Dataset]("data set")
	for _, d := range ds {
		checkDataset(d)
		r.Register(d.Name, d)
	}
	return r
}

// RegisterDataset makes d available to -dataset, checkpoints and the
// commands' help, after the data sets registered before it. A data set
// without a name or a loader, with a Best not in BestMetrics, or under a
// name taken, is a programmer error and panics.
func RegisterDataset(d Dataset) {
	checkDataset(d)
	datasets.Register(d.Name, d)
}

// checkDataset panics, naming d, if d cannot load or names a Best that
// is not a metric.
func checkDataset(d Dataset) {
	switch {
	case d.Load == nil:
		panic(fmt.Sprintf("experiment: data set %q has no loader", d.Name))
	case !slices.Contains(BestMetrics, d.Best):
		panic(fmt.Sprintf("experiment: data set %q selects best/ by %q, not one of %v", d.Name, d.Best, BestMetrics))
	}
}

// LookupDataset returns the data set called name.
func LookupDataset(name string) (Dataset, error) {
	if d, ok := datasets.Lookup(name); ok {
		return d, nil
	}
	return Dataset{}, fmt.Errorf("data set %q is not one of %v", name, datasets.Names())
}

// Datasets lists the data sets networks train on, in the order they were
// registered.
func Datasets() []string { return datasets.Names() }

// DatasetsWith lists the registered data sets for which keep returns
// true, in the order they were registered.
func DatasetsWith(keep func(Dataset) bool) []string {
	var names []string
	for _, d := range datasets.Values() {
		if keep(d) {
			names = append(names, d.Name)
		}
	}
	return names
}

// multiDataset is one of the Multi-* variants: two 10-class tasks of
// 1×36×36 composites, LeNet, the common defaults (SGD at 1e-3, batch 256,
// 100 epochs, the rate halved at epochs 15, 30, …, 90) and DefaultValid
// composites held out for validation.
func multiDataset(v multimnist.Variant) Dataset {
	return Dataset{
		Name: v.Name,
		Load: func(dir string, s Settings) (Data, error) {
			tr, va, te, err := v.LoadValid(dir, s.Seed, s.Valid)
			if err != nil {
				return Data{}, err
			}
			d := Data{Train: tr, Test: te}
			if va != nil { // a nil *Set is not a nil data.Dataset
				d.Valid = va
			}
			return d, nil
		},
		Model:    "lenet",
		Tasks:    func(Settings) int { return 2 },
		Defaults: func(s *Settings) { s.Valid = DefaultValid },
		Best:     "accuracy",
		CheckValid: func(n int) error {
			if n < 0 || n%multimnist.PerSource != 0 {
				return fmt.Errorf("-valid must be 0 or a positive even number of composites, got %d", n)
			}
			return nil
		},
	}
}

// sarcosDataset is SARCOS: 7 regression tasks, the MLP, Adam at 1e-4,
// batch 512, 1,000 epochs, best/ by MSE on its validation split.
var sarcosDataset = Dataset{
	Name: sarcos.Name,
	Load: func(dir string, _ Settings) (Data, error) {
		sp, err := sarcos.Load(dir)
		if err != nil {
			return Data{}, err
		}
		return Data{Train: sp.Train, Valid: sp.Valid, Test: sp.Test}, nil
	},
	Model: "mlp",
	Tasks: func(Settings) int { return sarcos.Targets },
	Defaults: func(s *Settings) {
		s.Epochs, s.Batch, s.LR, s.Optimizer, s.Schedule = 1000, 512, 1e-4, OptimizerAdam, ScheduleConstant
	},
	Best: "mse",
}

// CelebATrainImages is the size of the training subset of the paper's
// main CelebA table: the first 40,000 images of the official training
// split.
const CelebATrainImages = 40_000

// celebADataset is CelebA's main table: the first 10 attributes, the
// first CelebATrainImages training images, the paper's ResNet-18
// (resnet18-cifar), Adam at 5e-4, batch 64, 100 epochs, the rate × 0.85
// every 10 epochs.
var celebADataset = Dataset{
	Name: celeba.Name,
	Load: func(dir string, s Settings) (Data, error) {
		// Only the images the run uses are decoded: the limits apply here.
		sp, err := celeba.Load(dir, celeba.Options{Tasks: s.Tasks, TrainLimit: s.TrainLimit, TestLimit: s.TestLimit})
		if err != nil {
			return Data{}, err
		}
		return Data{Train: sp.Train, Valid: sp.Valid, Test: sp.Test}, nil
	},
	Model: "resnet18-cifar",
	Defaults: func(s *Settings) {
		s.Batch, s.LR, s.Optimizer = 64, 5e-4, OptimizerAdam
		s.Schedule, s.Gamma, s.Every = ScheduleExponential, 0.85, 10
		s.Tasks, s.TrainLimit = "10", CelebATrainImages
	},
	Best:       "accuracy",
	CheckTasks: celeba.CheckTasks,
	Tasks:      celebATasks,
}

// filesDataset is a user's own data (package data/files): the directory
// Settings.Files names, the model picked from the input shape unless
// -model says, Adam at 1e-3, batch 128, 30 epochs at a constant rate, a
// tenth of train.npz held out for validation where there is no
// valid.npz.
var filesDataset = Dataset{
	Name: files.Name,
	Load: func(_ string, s Settings) (Data, error) {
		if s.Files == nil || s.Files.Dir == "" {
			return Data{}, errors.New("-dataset files needs -data DIR, the directory of your files")
		}
		// A new run's spec holds the options it asks for (-sep, -missing,
		// -standardize-targets); a restored run's, those it loaded with.
		fd, err := files.Load(s.Files.Dir, s.Files.Options(s.Valid, s.Seed))
		if err != nil {
			return Data{}, err
		}
		d := Data{Train: fd.Train, Test: fd.Test, Record: func(rs *Settings) error { return recordFiles(rs, fd.Spec) }, Notes: fd.Notes}
		if fd.Valid != nil { // a nil *Set is not a nil data.Dataset
			d.Valid = fd.Valid
		}
		return d, nil
	},
	Defaults: func(s *Settings) {
		s.Epochs, s.Batch, s.LR, s.Optimizer, s.Schedule = 30, 128, 1e-3, OptimizerAdam, ScheduleConstant
		s.Valid = files.AutoValid
	},
	Tasks:     filesTasks,
	Best:      ProperBest,
	SmallData: true,
	CheckValid: func(n int) error {
		if n < 0 && n != files.AutoValid {
			return fmt.Errorf("-valid must be %d (a tenth), 0 (none) or a number of examples, got %d", files.AutoValid, n)
		}
		return nil
	},
}

// recordFiles records in a new run's settings what the file data set's
// training split decided, or checks that the data loaded for a restored
// run agree with what its settings recorded (the files' content hashes
// where it recorded them). A restored run's settings then name the
// directory the data were read from, which may have moved.
func recordFiles(s *Settings, spec files.Spec) error {
	if s.Files == nil {
		return errors.New("-dataset files needs -data DIR, the directory of your files")
	}
	if s.Files.Input == nil { // a new run
		spec.Dir = s.Files.Dir
		s.Files = &spec
		return nil
	}
	if err := spec.Agrees(s.Files); err != nil {
		return err
	}
	rec := *s.Files
	rec.Dir = spec.Dir
	s.Files = &rec
	return nil
}
