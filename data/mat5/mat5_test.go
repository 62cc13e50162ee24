package mat5

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// expected is what testdata/make_fixtures.py says scipy.io.savemat wrote.
type expected struct {
	Scipy string
	Files map[string]map[string]struct {
		Rows, Cols int
		Data       []float64
	}
}

func loadExpected(t *testing.T) expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// Every numeric matrix scipy wrote, compressed or not, comes back exactly:
// same names, shapes and bits (including −0), in row-major order.
func TestReadsWhatScipyWrote(t *testing.T) {
	e := loadExpected(t)
	for _, file := range []string{"doubles.mat", "doubles_compressed.mat", "mixed.mat", "mixed_compressed.mat"} {
		ms, err := ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		want := e.Files[file]
		if len(ms) != len(want) {
			t.Fatalf("%s: %d variables, scipy wrote %d", file, len(ms), len(want))
		}
		for _, m := range ms {
			w, ok := want[m.Name]
			if !ok {
				t.Fatalf("%s: unexpected variable %q", file, m.Name)
			}
			if m.Rows != w.Rows || m.Cols != w.Cols {
				t.Fatalf("%s %s: %d×%d, scipy wrote %d×%d", file, m.Name, m.Rows, m.Cols, w.Rows, w.Cols)
			}
			for i, v := range w.Data {
				if math.Float64bits(m.Data[i]) != math.Float64bits(v) {
					t.Fatalf("%s %s[%d] = %v, scipy wrote %v", file, m.Name, i, m.Data[i], v)
				}
			}
		}
	}
	// The layout is row-major: At(1, 0) is the second row's first value.
	ms, _ := ReadFile(filepath.Join("testdata", "doubles.mat"))
	if ms[0].At(1, 0) != e.Files["doubles.mat"]["sarcos_inv"].Data[28] {
		t.Error("At(1, 0) is not row 1, column 0")
	}
}

// What the reader does not support, and damaged files, are refused with an
// error saying what is wrong.
func TestRefusals(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "doubles.mat"))
	if err != nil {
		t.Fatal(err)
	}
	compressed, _ := os.ReadFile(filepath.Join("testdata", "doubles_compressed.mat"))
	for _, tc := range []struct {
		name string
		file string // a fixture, or
		data []byte // these bytes
		want string
	}{
		{"cell array", "cell.mat", nil, `variable "c": a cell array; only real numeric matrices are supported`},
		{"complex", "complex.mat", nil, `variable "z": a complex double array`},
		{"text", "text.mat", nil, `variable "s": a character array`},
		{"three dimensions", "cube.mat", nil, `variable "t": an array of 3 dimensions [2 3 4]`},
		{"truncated data", "", good[:len(good)-100], "truncated: element of type 14 says"},
		{"truncated header", "", good[:100], "not a MAT-file: 128-byte header expected"},
		{"wrong endian indicator", "", append(append([]byte{}, good[:126]...), append([]byte("XX"), good[128:]...)...), `endian indicator "XX"`},
		{"wrong version", "", append(append([]byte{}, good[:124]...), append([]byte{2, 0}, good[126:]...)...), "MAT-file version 0x0002"},
		{"HDF5 file", "", append([]byte("\x89HDF\r\n\x1a\n"), make([]byte, 200)...), "MATLAB 7.3 (HDF5)"},
		{"broken compression", "", append(append([]byte{}, compressed[:140]...), make([]byte, len(compressed)-140)...), "compressed element"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.file != "" {
				_, err = ReadFile(filepath.Join("testdata", tc.file))
			} else {
				_, err = Read(bytes.NewReader(tc.data))
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// FuzzRead checks that no input makes the reader panic or return a matrix
// whose data does not fit its shape.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"doubles.mat", "doubles_compressed.mat", "mixed.mat", "mixed_compressed.mat", "cell.mat", "cube.mat"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, m := range ms {
			if len(m.Data) != m.Rows*m.Cols {
				t.Fatalf("%s: %d values for %d×%d", m.Name, len(m.Data), m.Rows, m.Cols)
			}
		}
	})
}
