package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/cmd/internal/cli"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// compare keeps no finished run alive: after each of several runs in one
// process, the live heap (after one collection) is back within 16 MiB of
// where it was before the first, where each run's graphs hold about 350
// MB while it trains (2 workers at batch 256). The runs train on a
// synthetic data set shaped as Multi-MNIST.
func TestRunsReleaseTheirMemory(t *testing.T) {
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	o, err := parseFlags([]string{"-dataset", "multi-mnist", "-methods", "linear,mgda,mtsgd:authors,moo-svgd", "-epochs", "1",
		"-particles", "2", "-train-limit", "64", "-test-limit", "40", "-workers", "2", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	d := &experiment.Data{Train: testenv.Images("train", 64, 1), Test: testenv.Images("test", 40, 2)}
	const margin = 16 << 20
	base := liveHeap()
	for _, c := range o.plan().Cells {
		method := c.Method
		if _, err := runOne(context.Background(), o, c.Settings, c, &d); err != nil {
			t.Fatal(err)
		}
		grown := int64(liveHeap()) - int64(base)
		t.Logf("after %s: %+.1f MiB", method, float64(grown)/(1<<20))
		if grown > margin {
			t.Errorf("after %s: the live heap grew by %d MiB, more than %d", method, grown>>20, margin>>20)
		}
	}
}

// A run too big for the machine (taken to have 24 GiB) is refused before
// it allocates, naming the flag; compare exits with status 2.
func TestRefusesRunsTooBig(t *testing.T) {
	t.Setenv(sysmem.Env, "24G")
	o, err := parseFlags([]string{"-dataset", "multi-mnist", "-methods", "mtsgd", "-particles", "100000", "-workers", "2", "-out", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	d := &experiment.Data{Train: testenv.Images("train", 64, 1), Test: testenv.Images("test", 40, 2)}
	c := o.plan().Cells[0]
	_, err = runOne(context.Background(), o, c.Settings, c, &d)
	if !errors.Is(err, sysmem.ErrTooBig) || !strings.Contains(err.Error(), "-particles 100000: the run needs at least ") {
		t.Fatalf("error %v, want one wrapping ErrTooBig, naming -particles 100000", err)
	}
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)
	if status := cli.Status(err); status != 2 {
		t.Errorf("status %d, want 2", status)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
