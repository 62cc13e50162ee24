package experiment

import (
	"fmt"
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

// DefaultMethod is the method a run uses unless told otherwise: the
// paper's.
const DefaultMethod = "mtsgd"

// builtinMethods are the paper's method and its baselines, each a value
// in a file of its own (method_<name>.go), in the order of every list the
// commands print (help, error messages, compare's default methods).
var builtinMethods = []Method{
	mtsgdMethod,
	linearMethod,
	linearPrefMethod,
	mgdaMethod,
	paretoMTLMethod,
	mooSVGDMethod,
	singleMethod,
	svgdMethod,
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
