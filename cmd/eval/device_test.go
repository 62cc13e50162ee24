package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu/cuda"
)

// -device takes cpu or cuda; in a build without -tags gpu, cuda is a
// command-line error (status 2) saying how to build one.
func TestDeviceFlag(t *testing.T) {
	if _, err := parseFlags([]string{"-ckpt", "x", "-device", "tpu"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-device must be cpu or cuda") {
		t.Errorf("-device tpu: error %v", err)
	}
	o, err := parseFlags([]string{"-ckpt", "x", "-device", "cuda"}, &bytes.Buffer{})
	switch {
	case cuda.CheckName("cuda") == nil: // a gpu build
		if err != nil || o.Device != "cuda" {
			t.Errorf("-device cuda in a gpu build: %+v, %v", o, err)
		}
	case !errors.Is(err, cuda.ErrNotBuilt):
		t.Errorf("-device cuda without the build: error %v, want one wrapping cuda.ErrNotBuilt", err)
	}
}
