package experiment

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/particles"
)

// Each model refuses, naming itself, inputs and tasks it cannot take;
// a method without a shared trunk refuses a model with batch statistics
// unless it trains one task (one task's network, or -single-task J);
// an unknown model is refused with the list of those there are.
func TestModelsRefuse(t *testing.T) {
	class := []data.Task{{Name: "a", Kind: data.Classification, Classes: 2}, {Name: "b", Kind: data.Classification, Classes: 3}}
	regr := []data.Task{{Name: "r", Kind: data.Regression}}
	for _, tc := range []struct {
		model, method string
		d             shaped
		want          string // "" for none
		hidden        string
		oneTask       float64 // -single-task
	}{
		{"lenet", "mtsgd", shaped{class, []int{1, 36, 36}}, "", "", 0},
		{"lenet", "single", shaped{class, []int{1, 36, 36}}, "", "", 0},
		{"lenet", "mtsgd", shaped{class, []int{21}}, "lenet: inputs of shape [21], want 1×36×36 images", "", 0},
		{"lenet", "mtsgd", shaped{regr, []int{1, 36, 36}}, "lenet: task r is not a classification task", "", 0},
		{"mlp", "mtsgd", shaped{regr, []int{21}}, "", "", 0},
		{"mlp", "mtsgd", shaped{regr, []int{1, 36, 36}}, "", "", 0},
		{"mlp", "mtsgd", shaped{regr, []int{21}}, "", "8,4", 0},
		{"lenet", "mtsgd", shaped{class, []int{1, 36, 36}}, "-hidden sizes the mlp's layers; the model is lenet", "8", 0},
		{"resnet18", "mtsgd", shaped{class, []int{3, 64, 64}}, "-hidden sizes the mlp's layers; the model is resnet18", "8", 0},
		{"resnet18", "mtsgd", shaped{class, []int{3, 64, 64}}, "", "", 0},
		{"resnet18", "linear", shaped{regr, []int{3, 64, 64}}, "resnet18: task r is not a classification task", "", 0},
		{"resnet18", "single", shaped{class, []int{3, 64, 64}}, "-method single is not available with resnet18 (batch normalisation in independent networks); -single-task J trains the network on task J alone", "", 0},
		{"resnet18", "single", shaped{class, []int{3, 64, 64}}, "", "", 2},
		{"resnet18", "single", shaped{class[:1], []int{3, 64, 64}}, "", "", 0},
		{"vgg", "mtsgd", shaped{class, []int{3, 64, 64}}, `model "vgg" is not one of ` + strings.Join(ModelNames(), ", "), "", 0},
	} {
		s := Settings{Model: tc.model, Method: tc.method, Hidden: tc.hidden}
		if tc.oneTask != 0 {
			s.MethodParams = map[string]float64{singleTaskParam: tc.oneTask}
		}
		m, err := s.model(tc.d)
		switch {
		case err != nil && tc.model != "vgg" && !errors.Is(err, ErrUnfit):
			t.Errorf("%s on %v: error %v does not wrap ErrUnfit", tc.model, tc.d.shape, err)
		case tc.hidden == "8,4" && (err != nil || len(m.TrunkParams()) != 4 || m.TrunkParams()[2].Shape[1] != 4):
			t.Errorf("mlp with -hidden 8,4: %v", err)
		case tc.model == "resnet18" && tc.method == "single" && tc.want == "" && (err != nil || len(m.TrunkStats()) == 0):
			// -single-task J, or one task: the network itself, its batch
			// norms' statistics its trunk's.
			t.Errorf("%s with single on %d tasks, -single-task %v: %v, a shared trunk with batch statistics wanted", tc.model, len(tc.d.tasks), tc.oneTask, err)
		case tc.want == "" && err != nil:
			t.Errorf("%s with %s on %v: %v", tc.model, tc.method, tc.d.shape, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s with %s on %v: error %v, want %q", tc.model, tc.method, tc.d.shape, err, tc.want)
		}
	}
}

// Each data set's defaults are the paper's protocol, field for field:
// checkpoints and compare's run directories record these settings, and a
// run asked for again must find them equal. A registered data set without
// an entry here fails.
func TestDatasetDefaults(t *testing.T) {
	base := func(dataset, model string) Settings {
		s := Settings{
			Dataset: dataset, Model: model, Method: "mtsgd", Particles: 5,
			Epochs: 100, Batch: 256, LR: 1e-3, Optimizer: OptimizerSGD, Momentum: 0.9,
			Schedule: ScheduleMultiStep, Milestones: "15,30,45,60,75,90", Gamma: 0.5, Every: 1,
			KernelScale: 1, Seed: 1, Dtype: DtypeFloat32,
		}
		p, err := LookupPreset(DefaultPreset)
		if err != nil {
			t.Fatal(err)
		}
		p.Apply(&s)
		return s
	}
	want := map[string]Settings{}
	for _, name := range []string{"multi-mnist", "multi-fashion", "multi-fashion-mnist"} {
		s := base(name, "lenet")
		s.Valid = 10_000
		want[name] = s
	}
	s := base("sarcos", "mlp")
	s.Epochs, s.Batch, s.LR, s.Optimizer, s.Schedule = 1000, 512, 1e-4, OptimizerAdam, ScheduleConstant
	want["sarcos"] = s
	s = base("celeba", "resnet18-cifar")
	s.Batch, s.LR, s.Optimizer, s.Schedule, s.Gamma, s.Every, s.Tasks, s.TrainLimit = 64, 5e-4, OptimizerAdam, ScheduleExponential, 0.85, 10, "10", 40_000
	want["celeba"] = s
	s = base("files", "")
	s.Epochs, s.Batch, s.LR, s.Optimizer, s.Schedule, s.Valid = 30, 128, 1e-3, OptimizerAdam, ScheduleConstant, -1
	want["files"] = s
	for _, name := range Datasets() {
		w, ok := want[name]
		if !ok {
			t.Errorf("data set %s: no defaults to compare with here", name)
			continue
		}
		if got := Defaults(name); !got.Equal(w) {
			t.Errorf("%s defaults\n got  %+v\n want %+v", name, got, w)
		}
		d := Defaults(name)
		if name == "files" {
			d.Files = &files.Spec{Dir: "DIR"}
		}
		if err := d.Check(); err != nil {
			t.Errorf("%s defaults: %v", name, err)
		}
	}
	for name := range want {
		if _, err := LookupDataset(name); err != nil {
			t.Errorf("defaults for %v", err)
		}
	}
	for _, d := range datasets.Values() {
		if d.Model == "" {
			continue // picked from the data's shape
		}
		if _, err := LookupModel(d.Model); err != nil {
			t.Errorf("data set %s: %v", d.Name, err)
		}
	}
	for name, best := range map[string]string{"multi-mnist": "accuracy", "sarcos": "mse", "celeba": "accuracy", "synthetic": "accuracy"} {
		if got := DefaultBest(name); got != best {
			t.Errorf("%s: best/ by %s, want %s", name, got, best)
		}
	}
}

// The settings only some data sets take are refused elsewhere, naming
// those that take them, and checked by the data set that does.
func TestDatasetChecks(t *testing.T) {
	tasksChosen := strings.Join(DatasetsWith(func(d Dataset) bool { return d.CheckTasks != nil }), ", ")
	heldOut := strings.Join(DatasetsWith(func(d Dataset) bool { return d.CheckValid != nil }), ", ")
	if !strings.Contains(tasksChosen, "celeba") || !strings.Contains(heldOut, "multi-mnist") {
		t.Errorf("-tasks on %s, -valid on %s", tasksChosen, heldOut)
	}
	for _, tc := range []struct {
		dataset string
		edit    func(*Settings)
		want    string
	}{
		{"sarcos", func(s *Settings) { s.Tasks = "3" }, "-tasks chooses the tasks of " + tasksChosen + "; sarcos has fixed tasks"},
		{"multi-mnist", func(s *Settings) { s.Tasks = "3" }, "-tasks chooses the tasks of " + tasksChosen + "; multi-mnist has fixed tasks"},
		{"celeba", func(s *Settings) { s.Tasks = "Male,Male" }, "attribute Male is given twice"},
		{"celeba", func(s *Settings) { s.Tasks = "0" }, "at least 1 attribute"},
		{"sarcos", func(s *Settings) { s.Valid = 1000 }, "-valid holds out training examples for validation on " + heldOut + "; sarcos has its own validation split"},
		{"celeba", func(s *Settings) { s.Valid = -2 }, "celeba has its own validation split"},
		{"multi-mnist", func(s *Settings) { s.Valid = 3 }, "-valid must be 0 or a positive even number of composites, got 3"},
		{"multi-mnist", func(s *Settings) { s.Valid = -2 }, "-valid must be 0 or a positive even number of composites, got -2"},
		{"multi-mnist", func(s *Settings) { s.Valid = 0 }, ""},
		{"files", func(s *Settings) {}, "-dataset files needs -data DIR"},
		{"files", func(s *Settings) { s.Files = &files.Spec{Dir: "d"}; s.Valid = -2 }, "-valid must be -1 (a tenth), 0 (none) or a number of examples, got -2"},
		{"sarcos", func(s *Settings) { s.Files = &files.Spec{Dir: "d"} }, "-data DIR trains on the files in DIR; it cannot be given with -dataset sarcos"},
		{"sarcos", func(s *Settings) { s.Hidden = "64,x" }, `-hidden "64,x"`},
	} {
		s := Defaults(tc.dataset)
		tc.edit(&s)
		err := s.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %+v: %v", tc.dataset, s, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.dataset, err, tc.want)
		}
	}
	// A data set no one registered (a test's) takes neither.
	s := testSettings(1)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	s.Valid = 2
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "synthetic has its own validation split") {
		t.Errorf("-valid on an unregistered data set: %v", err)
	}
	if _, _, err := LoadData(s, t.TempDir()); err == nil || !strings.Contains(err.Error(), `data set "synthetic" is not one of [multi-mnist`) {
		t.Errorf("loading an unregistered data set: %v", err)
	}
}

// The built-in methods come first, in their order, whatever else
// registers; MethodNames keeps what it is asked to; an unknown name lists
// them all; a method that cannot run, or a name taken, is refused at
// registration. (What each method declares, its test file says:
// TestOneStepPerMethod.)
func TestMethodRegistry(t *testing.T) {
	names := MethodNames(nil)
	for i, m := range builtinMethods {
		if i >= len(names) || names[i] != m.Name {
			t.Fatalf("methods %v do not begin with the built-ins, %s at %d", names, m.Name, i)
		}
	}
	for _, keep := range []func(Method) bool{
		func(m Method) bool { return m.Toy },
		func(m Method) bool { return m.Kernels },
		func(m Method) bool { return m.Trunk == nil },
	} {
		var want []string
		for _, m := range Methods() {
			if keep(m) {
				want = append(want, m.Name)
			}
		}
		if got := MethodNames(keep); !slices.Equal(got, want) {
			t.Errorf("methods kept %v, want %v", got, want)
		}
	}
	if _, err := LookupMethod("adamw"); err == nil || err.Error() != `method "adamw" is not one of `+strings.Join(names, ", ") {
		t.Errorf("unknown method: %v", err)
	}
	s := Defaults("multi-mnist")
	s.Method = "adamw"
	if err := s.Check(); err == nil || !strings.HasPrefix(err.Error(), `-method "adamw" is not one of mtsgd,`) {
		t.Errorf("Check of an unknown method: %v", err)
	}
	// The presets are MT-SGD's: other methods drop them.
	if got := Defaults("multi-mnist").ForMethod("linear"); got.Preset != "" || got.Warmup != 0 || got.ScoreScale != ScaleMean {
		t.Errorf("linear keeps MT-SGD's choices: %+v", got)
	}
	if got := Defaults("multi-mnist").ForMethod("mtsgd"); got.Preset != DefaultPreset {
		t.Errorf("mtsgd drops its preset: %+v", got)
	}
	heads := func(RuleParams) (particles.Rule, error) { return &particles.Linear{}, nil }
	for name, m := range map[string]Method{
		"no heads":       {Name: "x"},
		"toy, no trunk":  {Name: "x", Heads: heads, Toy: true},
		"a name taken":   {Name: "mtsgd", Heads: heads},
		"a list's comma": {Name: "a,b", Heads: heads},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			RegisterMethod(m)
		}()
	}
}

// docs/training.md's table of methods names every built-in method once
// and nothing else.
func TestMethodsDocumented(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "docs", "training.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "\n| method | trunks |")
	if !ok {
		t.Fatal("docs/training.md has no table of methods")
	}
	var documented []string
	for _, line := range strings.Split(table, "\n")[2:] { // past the header's end and its rule
		name, ok := strings.CutPrefix(line, "| `")
		if !ok {
			break
		}
		name, _, _ = strings.Cut(name, "`")
		documented = append(documented, name)
	}
	var builtins []string
	for _, m := range builtinMethods {
		builtins = append(builtins, m.Name)
	}
	slices.Sort(documented)
	slices.Sort(builtins)
	if !slices.Equal(documented, builtins) {
		t.Errorf("docs/training.md's methods %v, the built-ins %v", documented, builtins)
	}
}
