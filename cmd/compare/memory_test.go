package main

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"testing"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/experiment"
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
	for _, method := range o.Methods {
		if _, err := runOne(context.Background(), o, method, 1, &d); err != nil {
			t.Fatal(err)
		}
		grown := int64(liveHeap()) - int64(base)
		t.Logf("after %s: %+.1f MiB", method, float64(grown)/(1<<20))
		if grown > margin {
			t.Errorf("after %s: the live heap grew by %d MiB, more than %d", method, grown>>20, margin>>20)
		}
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
