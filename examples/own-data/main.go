// Command own-data writes a small multi-task data set in the layout of
// package data/files, exported from Multi-MNIST: the worked example of
// docs/own-data.md.
//
//	go run ./examples/own-data -out DIR [-train 6000] [-valid 1000] [-test 2000] [-new 2000]
//
// DIR gets train.npz, valid.npz and test.npz (x: N×1×36×36 uint8
// composites, y: N×2 labels, top-left and bottom-right digit), tasks.json
// (two 10-class tasks, inputs divided by 255 as the built-in data set
// does), and new.npz: x alone, composites of the test split after those
// of test.npz, to predict on. It needs MNIST (scripts/fetch-data).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/data/multimnist"
)

// Options are the example's flags.
type Options struct {
	Out, DataDir            string
	Seed                    uint64
	Train, Valid, Test, New int
}

// main exits 0 on success, 2 on a bad flag and 1 on any other error,
// the statuses the project's commands use for the same cases.
func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "own-data:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "own-data:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("own-data", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.Out, "out", "", "directory to write (required)")
	fs.IntVar(&o.Train, "train", 6000, "training composites")
	fs.IntVar(&o.Valid, "valid", 1000, "validation composites")
	fs.IntVar(&o.Test, "test", 2000, "test composites")
	fs.IntVar(&o.New, "new", 2000, "composites to predict on (new.npz)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the composites")
	fs.StringVar(&o.DataDir, "data-dir", "", "MNIST's data directory (default $"+data.DirEnv+", else ~/.cache/mtsgd)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.Out == "" {
		return o, fmt.Errorf("-out is required")
	}
	return o, nil
}

func run(_ context.Context, o Options) error {
	out, dataDir, seed, nTrain, nValid, nTest, nNew := o.Out, o.DataDir, o.Seed, o.Train, o.Valid, o.Test, o.New
	dir, err := data.Dir(dataDir)
	if err != nil {
		return err
	}
	train, valid, test, err := multimnist.Variants[0].LoadValid(dir, seed, 10_000)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	desc := files.Description{Input: files.Unit, Tasks: []files.TaskSpec{
		{Name: "top-left", Kind: "classification", Classes: 10},
		{Name: "bottom-right", Kind: "classification", Classes: 10},
	}}
	if err := files.WriteDescription(out, desc); err != nil {
		return err
	}
	for _, sp := range []struct {
		file     string
		set      *multimnist.Set
		from, n  int
		withLabs bool
	}{
		{files.TrainFile, train, 0, nTrain, true},
		{files.ValidFile, valid, 0, nValid, true},
		{files.TestFile, test, 0, nTest, true},
		{"new.npz", test, nTest, nNew, false},
	} {
		if sp.from+sp.n > sp.set.Len() {
			return fmt.Errorf("%s: %d composites asked for, the split has %d", sp.file, sp.from+sp.n, sp.set.Len())
		}
		var x []byte
		var y []float64
		for i := sp.from; i < sp.from+sp.n; i++ {
			x = append(x, sp.set.Image(i)...)
			a, b := sp.set.Labels(i)
			y = append(y, float64(a), float64(b))
		}
		if !sp.withLabs {
			y = nil
		}
		path := filepath.Join(out, sp.file)
		if err := files.WriteSplit(path, x, []int{sp.n, 1, multimnist.Side, multimnist.Side}, y); err != nil {
			return err
		}
		fmt.Printf("%s: %d composites\n", path, sp.n)
	}
	return nil
}
