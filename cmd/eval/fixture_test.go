package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mtsgd/mtsgd/experiment/ckptfixture"
)

// eval -ckpt on the checkpoints an earlier build wrote (package
// ckptfixture) prints the figures recorded when they were written.
func TestFixtureCheckpoints(t *testing.T) {
	ckptfixture.Register()
	dir := filepath.Join("..", "..", "experiment", "ckptfixture", "testdata")
	want, err := ckptfixture.ReadFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, fx := range ckptfixture.Runs {
		for _, split := range ckptfixture.Splits {
			var stdout bytes.Buffer
			o, err := parseFlags([]string{"-ckpt", filepath.Join(dir, fx.Name), "-split", split, "-json", "-workers", "1", "-data-dir", dir}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if err := run(context.Background(), o, &stdout); err != nil {
				t.Fatalf("%s, %s: %v", fx.Name, split, err)
			}
			var rep struct {
				Epoch int
				Tasks []ckptfixture.TaskFigures
			}
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("%s, %s: %v: %s", fx.Name, split, err, stdout.Bytes())
			}
			if rep.Epoch != fx.Settings.Epochs {
				t.Errorf("%s: epoch %d, want %d", fx.Name, rep.Epoch, fx.Settings.Epochs)
			}
			for _, d := range ckptfixture.Diff(fx.Name+", "+split, rep.Tasks, want[fx.Name].Eval[split]) {
				t.Error(d)
			}
		}
	}
}
