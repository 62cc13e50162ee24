package experiment

import (
	"fmt"
	"math"
	"strings"

	"github.com/mtsgd/mtsgd/internal/registry"
	"github.com/mtsgd/mtsgd/particles"
)

// A Method is a way of moving the particles, as -method names it: the
// rule that moves the trunks from every task's score, the rule that moves
// each task's heads from that task's score, and what the rest of a run
// needs to know about them. The same Trunk rule moves the points of the
// toy problems, whose targets play the tasks.
type Method struct {
	Name string
	// Title is the method's name in prose and in the results' READMEs
	// ("MT-SGD", "Pareto MTL"); "" where it is Name.
	Title string
	// Help is one line for the commands' help: what moves the trunks
	// and the heads.
	Help string
	// Trunk returns the rule that moves the trunks; its errors name the
	// method (they reach the user as they are). Nil for a method
	// without a shared trunk: each task then has a whole network of its
	// own in every particle (models.Independent), moved by Heads.
	Trunk func(RuleParams) (particles.Rule, error)
	// Independent, if not nil, names the runs of a method with a Trunk
	// rule that train no shared trunk all the same, as a method without
	// one does: single's, unless its task parameter names one task.
	Independent func(Settings) bool
	// Heads returns the rule that moves one task's heads (every task
	// gets its own).
	Heads func(RuleParams) (particles.Rule, error)
	// Kernels says that both rules are kernel rules: they read
	// -kernel-scale, -repulsion and -head-repulsion, -kernel-on outputs
	// can place their kernels, and each keeps M×M kernel matrices
	// (particles.KernelMemory).
	Kernels bool
	// Presets says that the method takes MT-SGD's choices (Preset: the
	// score scale, U's terms, the warm-up, the kernels' space, the
	// update order). Any other method runs with the batch-mean scores,
	// no warm-up and kernels over the parameters (Settings.ForMethod),
	// so that it sees exactly the gradients the data set's defaults give.
	Presets bool
	// Toy says that Trunk also moves the points of the toy problems: its
	// rule needs nothing but positions and scores.
	Toy bool
	// Compared puts the method in cmd/compare's default lists: -methods'
	// and -protocol tuned's.
	Compared bool
	// Params are the method's own hyperparameters, with the defaults of
	// its source.
	Params []Param
	// Fits, if not nil, refuses an ensemble the method cannot train: the
	// settings' particles (0 where not known: a protocol's plan) on tasks
	// tasks (0 where not known: the tasks of a data set before its files
	// are read), with the settings' parameters of the method. Settings
	// checks it before the data load and again once they have.
	Fits func(s Settings, tasks int) error
}

// shared reports whether a run of the method with settings s trains a
// shared trunk, moved by the Trunk rule; without one, each task has a
// whole network of its own in every particle (models.Independent).
func (m Method) shared(s Settings) bool {
	return m.Trunk != nil && (m.Independent == nil || !m.Independent(s))
}

// A Param is a hyperparameter of a method's own: -METHOD-NAME in train,
// @NAME=VALUE in compare's method specs, Settings.MethodParams in a
// checkpoint.
type Param struct {
	Name string
	// Default is the value of the method's source.
	Default float64
	// Help is one line for the flag's help.
	Help string
	// Min and Max bound the value (inclusive); both 0: any finite value.
	Min, Max float64
	// Whole says the value counts something (epochs, say): a whole number.
	Whole bool
}

// check reports a value the parameter cannot take.
func (p Param) check(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("must be a finite number, got %v", v)
	}
	if (p.Min != 0 || p.Max != 0) && (v < p.Min || v > p.Max) {
		return fmt.Errorf("must be in [%v, %v], got %v", p.Min, p.Max, v)
	}
	if p.Whole && v != math.Trunc(v) {
		return fmt.Errorf("must be a whole number, got %v", v)
	}
	return nil
}

// Param returns the method's parameter called name.
func (m Method) Param(name string) (Param, bool) {
	for _, p := range m.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// paramNames lists the method's parameters for an error message.
func (m Method) paramNames() string {
	if len(m.Params) == 0 {
		return "it has none"
	}
	names := make([]string, len(m.Params))
	for i, p := range m.Params {
		names[i] = p.Name
	}
	return "it has " + strings.Join(names, ", ")
}

// TrunkRule returns the rule that moves the trunks: the method's Trunk,
// repelled across the particles (particles.Repelled) when the settings
// ask for it. Nil for a run without a shared trunk.
func (m Method) TrunkRule(p RuleParams) (particles.Rule, error) {
	if !m.shared(p.Settings) {
		return nil, nil
	}
	r, err := m.Trunk(p)
	if err != nil || !p.Repel {
		return r, err
	}
	return &particles.Repelled{Rule: r, Kernel: kernel(p), Repulsion: p.Repulsion}, nil
}

// RuleParams are what a method's rules are made from.
type RuleParams struct {
	// Settings give the kernel scale, the repulsion weights, U's terms
	// and the number of particles.
	Settings
	// Tasks is the number of scores the trunk rule weighs (a toy
	// problem's targets).
	Tasks int
	// StepsPerEpoch is the number of batches in an epoch; 0 on the toy
	// problems, which have none.
	StepsPerEpoch int
}

// Param returns the value of the method's parameter name: the
// settings' if they give it, else def, the method's default.
func (p RuleParams) Param(name string, def float64) float64 {
	if v, ok := p.MethodParams[name]; ok {
		return v
	}
	return def
}

// DefaultMethod is the method a run uses unless told otherwise: the
// paper's.
const DefaultMethod = "mtsgd"

// builtinMethods are the paper's method and its baselines, then the
// field's gradient aggregators and loss weightings (package aggregate),
// each a value in a file of its own (method_<name>.go), in the order of
// every list the commands print (help, error messages, compare's default
// methods).
var builtinMethods = []Method{
	mtsgdMethod,
	linearMethod,
	linearPrefMethod,
	mgdaMethod,
	paretoMTLMethod,
	mooSVGDMethod,
	singleMethod,
	svgdMethod,
	pcgradMethod,
	cagradMethod,
	nashMTLMethod,
	imtlGMethod,
	imtlMethod,
	alignedMTLMethod,
	upgradMethod,
	dualProjMethod,
	configMethod,
	gradVacMethod,
	fairGradMethod,
	uwMethod,
	gradNormMethod,
	dwaMethod,
	rlwMethod,
	famoMethod,
	glsMethod,
	stchMethod,
}

// methods is the registry of methods. The built-ins are registered while
// the package's variables are initialised, so they come first whatever
// else registers; a method registered by an init function (its own
// file's, say) comes after them, in the order Go runs init functions: by
// file name within a package, and a package's after those of the
// packages it imports.
var methods = newMethods(builtinMethods)

// newMethods returns a registry holding ms in their order.
func newMethods(ms []Method) *registry.Registry[Method] {
	r := registry.New[Method]("method")
	for _, m := range ms {
		checkMethod(m)
		r.Register(m.Name, m)
	}
	return r
}

// RegisterMethod makes m available to -method, checkpoints and the
// commands' help, after the methods registered before it. A method
// without a name or a Heads rule, or a name taken, is a programmer error
// and panics.
func RegisterMethod(m Method) {
	checkMethod(m)
	methods.Register(m.Name, m)
}

// checkMethod panics, naming m, if m cannot run.
func checkMethod(m Method) {
	if m.Heads == nil {
		panic(fmt.Sprintf("experiment: method %q has no Heads rule", m.Name))
	}
	if m.Trunk == nil && m.Toy {
		panic(fmt.Sprintf("experiment: method %q has no Trunk rule to move the toy problems' points", m.Name))
	}
	for i, p := range m.Params {
		// compare's method specs spell a parameter @NAME=VALUE beside
		// their own @lr=, @scale= and @repel.
		if p.Name == "" || p.Name == "lr" || p.Name == "scale" || p.Name == "repel" || strings.ContainsAny(p.Name, "@=:, ") {
			panic(fmt.Sprintf("experiment: method %q has a parameter named %q", m.Name, p.Name))
		}
		for _, q := range m.Params[:i] {
			if q.Name == p.Name {
				panic(fmt.Sprintf("experiment: method %q has two parameters named %q", m.Name, p.Name))
			}
		}
		if err := p.check(p.Default); err != nil {
			panic(fmt.Sprintf("experiment: method %q parameter %s's default: %v", m.Name, p.Name, err))
		}
	}
}

// LookupMethod returns the method called name.
func LookupMethod(name string) (Method, error) {
	if m, ok := methods.Lookup(name); ok {
		return m, nil
	}
	return Method{}, fmt.Errorf("method %q is not one of %s", name, strings.Join(methods.Names(), ", "))
}

// Methods lists the registered methods in the order they were
// registered: the built-ins first.
func Methods() []Method { return methods.Values() }

// MethodNames lists the names of the registered methods for which keep
// returns true, all of them if keep is nil, in the order they were
// registered.
func MethodNames(keep func(Method) bool) []string {
	var names []string
	for _, m := range methods.Values() {
		if keep == nil || keep(m) {
			names = append(names, m.Name)
		}
	}
	return names
}

// The rules the built-in methods share.

// kernel is the RBF kernel of the settings' bandwidth scale.
func kernel(p RuleParams) particles.RBF { return particles.RBF{Scale: p.KernelScale} }

// svgdHeads moves each task's heads by SVGD, kernel on that task's heads.
func svgdHeads(p RuleParams) (particles.Rule, error) {
	return &particles.SVGD{Kernel: kernel(p), Repulsion: p.HeadRepulsion}, nil
}

// ownScore moves each head (or a task's whole network) along its own
// task's score: with one score, Linear's mean is that score.
func ownScore(RuleParams) (particles.Rule, error) { return &particles.Linear{}, nil }
