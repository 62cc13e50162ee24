package testenv

import (
	"image/png"
	"os"
	"testing"
)

// CheckPNG fails t unless path holds a decodable PNG image.
func CheckPNG(t testing.TB, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}
