package cli

import (
	"flag"
	"runtime"

	"github.com/mtsgd/mtsgd/data"
)

// The flags more than one command takes, each declared here once. A
// command adds a note where its meaning narrows ("networks:", a default
// that depends on the data set); flags whose meaning differs from command
// to command (-data, -out) take the command's usage whole.

// DataDir declares -data-dir, where the built-in data sets are looked for.
func DataDir(fs *flag.FlagSet, p *string, note string) {
	fs.StringVar(p, "data-dir", "", with(note, "data directory (default $"+data.DirEnv+", else ~/.cache/mtsgd)"))
}

// Workers declares -workers, the graphs run at once.
func Workers(fs *flag.FlagSet, p *int, note string) {
	fs.IntVar(p, "workers", runtime.GOMAXPROCS(0), with(note, "graphs run at once"))
}

// Device declares -device, where the networks compute.
func Device(fs *flag.FlagSet, p *string, note string) {
	fs.StringVar(p, "device", "cpu", with(note, "where the networks compute: cpu or cuda (a build with -tags gpu)"))
}

// Progress declares -progress.
func Progress(fs *flag.FlagSet, p *bool) {
	fs.BoolVar(p, "progress", true, "show a progress bar on stderr (off a terminal: a log line every tenth of the work)")
}

// Checkpoint declares -ckpt, the checkpoint a command reads.
func Checkpoint(fs *flag.FlagSet, p *string, note string) {
	fs.StringVar(p, "ckpt", "", with(note, "checkpoint directory, or a run directory for its last/ (required)"))
}

// Temperature declares -temperature: whether the ensemble's probabilities
// are also given after temperature scaling.
func Temperature(fs *flag.FlagSet, p *bool, note string) {
	fs.BoolVar(p, "temperature", true, with(note, "temperature scaling by the per-task temperatures fitted on the validation split"))
}

// Data declares -data with the command's usage: a directory of your own
// files for train and eval, an input file for predict.
func Data(fs *flag.FlagSet, p *string, usage string) {
	fs.StringVar(p, "data", "", usage)
}

// Out declares -out with the command's usage; set receives each value
// given (predict takes two).
func Out(fs *flag.FlagSet, usage string, set func(string) error) {
	fs.Func("out", usage, set)
}

// Settings points at a command's run settings that train and compare both
// take; SettingsFlags declares them.
type Settings struct {
	Dataset                       *string
	Particles                     *int
	LR                            *float64
	Optimizer                     *string
	Epochs, TrainLimit, TestLimit *int
}

// SettingsHelp says, per flag of SettingsFlags, what a command's default
// for it is, as the help shows it.
type SettingsHelp struct {
	Dataset, Particles, LR, Optimizer, Epochs, TrainLimit, TestLimit string
}

// SettingsFlags declares the run settings train and compare both take,
// their defaults the values s points at.
func SettingsFlags(fs *flag.FlagSet, s Settings, help SettingsHelp) {
	fs.StringVar(s.Dataset, "dataset", *s.Dataset, with(help.Dataset, "data set"))
	fs.IntVar(s.Particles, "particles", *s.Particles, with(help.Particles, "particles per run"))
	fs.Float64Var(s.LR, "lr", *s.LR, with(help.LR, "learning rate"))
	fs.StringVar(s.Optimizer, "optimizer", *s.Optimizer, with(help.Optimizer, "optimiser: sgd or adam"))
	fs.IntVar(s.Epochs, "epochs", *s.Epochs, with(help.Epochs, "passes over the training set"))
	fs.IntVar(s.TrainLimit, "train-limit", *s.TrainLimit, with(help.TrainLimit, "train on the first N training examples only (0: all)"))
	fs.IntVar(s.TestLimit, "test-limit", *s.TestLimit, with(help.TestLimit, "evaluate on the first N test (and validation) examples only (0: all)"))
}

// with appends a command's note to a flag's usage.
func with(note, usage string) string {
	if note == "" {
		return usage
	}
	return usage + " (" + note + ")"
}
