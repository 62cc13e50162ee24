package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npz"

	"github.com/mtsgd/mtsgd/data"
)

// npyioArchive writes vs with npyio's writer, an implementation of the
// format independent of this package's.
func npyioArchive(t testing.TB, vs map[string]any) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := npz.NewWriter(&buf)
	for name, v := range vs {
		if err := w.Write(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func open(t testing.TB, b []byte) *File {
	t.Helper()
	f, err := NewReader(bytes.NewReader(b), int64(len(b)), "test.npz")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// What npyio writes, of every element type the reader takes, reads back
// to the same values.
func TestReadsNpyio(t *testing.T) {
	want := []float64{0, 1, 2, 3, 4, 5}
	tests := []struct {
		name  string
		v     any
		descr string
	}{
		{"u1", []uint8{0, 1, 2, 3, 4, 5}, "<u1"},
		{"i1", []int8{0, 1, 2, 3, 4, 5}, "<i1"},
		{"u2", []uint16{0, 1, 2, 3, 4, 5}, "<u2"},
		{"i2", []int16{0, 1, 2, 3, 4, 5}, "<i2"},
		{"i4", []int32{0, 1, 2, 3, 4, 5}, "<i4"},
		{"u4", []uint32{0, 1, 2, 3, 4, 5}, "<u4"},
		{"i8", []int64{0, 1, 2, 3, 4, 5}, "<i8"},
		{"u8", []uint64{0, 1, 2, 3, 4, 5}, "<u8"},
		{"f4", []float32{0, 1, 2, 3, 4, 5}, "<f4"},
		{"f8", want, "<f8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := open(t, npyioArchive(t, map[string]any{"x": tt.v}))
			a, err := f.Array("x")
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if a.Len != 6 || len(a.Shape) != 1 || a.Shape[0] != 6 {
				t.Fatalf("shape %v, len %d; want [6]", a.Shape, a.Len)
			}
			if !strings.HasSuffix(a.Descr, tt.descr[1:]) {
				t.Errorf("descr %q, want %q", a.Descr, tt.descr)
			}
			got := make([]float64, 6)
			if err := a.ReadFloat64(got[:2]); err != nil {
				t.Fatal(err)
			}
			if err := a.ReadFloat64(got[2:]); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("element %d = %v, want %v", i, got[i], want[i])
				}
			}
			if err := a.ReadFloat64(got[:1]); !errors.Is(err, data.ErrInvalid) {
				t.Errorf("reading past the end: %v, want data.ErrInvalid", err)
			}
		})
	}
}

// The writer's archives read back, and npyio reads them too.
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	v := []float64{1.5, -2, math.Pi, 1e-300, 7, 8}
	if err := w.WriteFloat64("probs", []int{3, 2}, v); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFloat64("one", []int{1}, v[:1]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := open(t, buf.Bytes())
	a, err := f.Array("probs")
	if err != nil {
		t.Fatal(err)
	}
	if a.Bytes%64 != 0 {
		t.Errorf("header of %d bytes, not a multiple of 64", a.Bytes)
	}
	got := make([]float64, 6)
	if err := a.ReadFloat64(got); err != nil {
		t.Fatal(err)
	}
	if !equal(got, v) || a.Shape[0] != 3 || a.Shape[1] != 2 {
		t.Errorf("read %v of shape %v, want %v of shape [3 2]", got, a.Shape, v)
	}
	var theirs []float64
	if err := npz.Read(bytes.NewReader(buf.Bytes()), "one.npy", &theirs); err != nil {
		t.Fatal(err)
	}
	if len(theirs) != 1 || theirs[0] != 1.5 {
		t.Errorf("npyio read %v, want [1.5]", theirs)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rawArchive is an archive with one stored entry x.npy of the given
// bytes.
func rawArchive(t testing.TB, method uint16, content []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, err := z.CreateHeader(&zip.FileHeader{Name: "x.npy", Method: method})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(content)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func npy(dict string, body []byte) []byte {
	h := append([]byte{}, Magic...)
	h = append(h, 1, 0, 0, 0)
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)+1))
	h = append(h, dict...)
	h = append(h, '\n')
	return append(h, body...)
}

// Malformed arrays are errors that wrap data.ErrInvalid and say what is
// wrong, before any allocation of the data.
func TestMalformed(t *testing.T) {
	ok := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
	body := make([]byte, 8)
	tests := []struct {
		name, want string
		content    []byte
		method     uint16
	}{
		{"no magic", "magic", []byte("PK not numpy at all"), zip.Store},
		{"version", "version 9", append(append([]byte{}, Magic...), 9, 0, 0, 0), zip.Store},
		{"header cut", "unexpected EOF", npy(ok, nil)[:20], zip.Store},
		{"no newline", "", npy("{'descr': '<f4'", nil)[:25], zip.Store},
		{"not a dict", "not a dict", npy("[1, 2]", body), zip.Store},
		{"complex", "not a boolean, an integer", npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", body), zip.Store},
		{"string", "not a number type", npy("{'descr': '<U10', 'fortran_order': False, 'shape': (1,), }", body), zip.Store},
		{"fortran order", "fortran_order is not True or False", npy("{'descr': '<f4', 'fortran_order': 1, 'shape': (2,), }", body), zip.Store},
		{"float128", "not a number type", npy("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", body), zip.Store},
		{"missing shape", "no \"shape\"", npy("{'descr': '<f4', 'fortran_order': False, }", body), zip.Store},
		{"unknown key", "unknown key", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", body), zip.Store},
		{"key twice", "twice", npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", body), zip.Store},
		{"negative dim", "dimension", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", body), zip.Store},
		{"huge dim", "too large", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", body), zip.Store},
		{"2^60 elements", "2^50", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 1073741824), }", body), zip.Store},
		{"2^40 elements", "truncated", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", body), zip.Store},
		{"2^40 deflated", "truncated", npy("{'descr': '<u1', 'fortran_order': False, 'shape': (1048576, 1048576), }", body), zip.Deflate},
		{"truncated", "truncated", npy(ok, body[:5]), zip.Store},
		{"trailing", "trailing", npy(ok, append(body, 1)), zip.Store},
		{"text after", "after the dict", npy(ok+" x", body), zip.Store},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := open(t, rawArchive(t, tt.method, tt.content))
			a, err := f.Array("x")
			if err == nil {
				a.Close()
				t.Fatal("no error")
			}
			if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "test.npz: array x") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q; want data.ErrInvalid naming test.npz, array x and %q", err, tt.want)
			}
		})
	}
}

// An archive cut short is refused by name; so is a missing array.
func TestTruncatedArchive(t *testing.T) {
	b := npyioArchive(t, map[string]any{"x": []float32{1, 2, 3}})
	for _, n := range []int{0, 10, len(b) / 2, len(b) - 1} {
		_, err := NewReader(bytes.NewReader(b[:n]), int64(n), "cut.npz")
		if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "cut.npz") {
			t.Errorf("%d of %d bytes: %v, want data.ErrInvalid naming cut.npz", n, len(b), err)
		}
	}
	f := open(t, b)
	if _, err := f.Array("y"); !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), `no array "y"`) {
		t.Errorf("missing array: %v", err)
	}
}

// A deflated entry whose data is cut short (its sizes edited to match) is
// an error naming the element, not a short read.
func TestShortData(t *testing.T) {
	content := npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", make([]byte, 32))
	b := rawArchive(t, zip.Store, content)
	f := open(t, b)
	a, err := f.Array("x")
	if err != nil {
		t.Fatal(err)
	}
	// Corrupt the reader under the array: what it reads ends early.
	a.r = struct {
		io_reader
		closer
	}{bytes.NewReader(make([]byte, 16)), closer{}}
	err = a.ReadFloat64(make([]float64, 4))
	if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "reading element 0") {
		t.Errorf("%v, want an error at element 0", err)
	}
}

type io_reader interface{ Read([]byte) (int, error) }
type closer struct{}

func (closer) Close() error { return nil }

// Random bytes never panic the reader: it returns an error or the
// array's elements.
func FuzzRead(f *testing.F) {
	f.Add(npyioArchive(f, map[string]any{"x": []float32{1, 2, 3}}))
	f.Add(npyioArchive(f, map[string]any{"x": []uint8{1, 2, 3}, "y": []int64{4}}))
	f.Add(rawArchive(f, zip.Deflate, npy("{'descr': '<u1', 'fortran_order': False, 'shape': (3, 1), }", []byte{1, 2, 3})))
	f.Add(rawArchive(f, zip.Store, npy("{'descr': '>i2', 'fortran_order': False, 'shape': (), }", []byte{1, 2})))
	f.Fuzz(func(t *testing.T, b []byte) {
		z, err := NewReader(bytes.NewReader(b), int64(len(b)), "fuzz.npz")
		if err != nil {
			return
		}
		for _, name := range z.Names() {
			a, err := z.Array(name)
			if err != nil {
				continue
			}
			// The checks bound the array by the archive's own size.
			if uint64(a.Len)*uint64(a.DType.Size) > maxDeflateRatio*uint64(len(b))+MaxHeader {
				t.Fatalf("array %s of %d elements from %d bytes", name, a.Len, len(b))
			}
			dst := make([]float64, min(a.Len, 1<<16))
			_ = a.ReadFloat64(dst)
			a.Close()
		}
	})
}

// An archive holding an array twice, under one name or as x and x.npy
// (NumPy loads the last, this reader would take the first), is refused
// by name; distinct names are not.
func TestRepeatedMember(t *testing.T) {
	ok := npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", make([]byte, 8))
	for _, tc := range []struct {
		names []string
		want  string // "" for none
	}{
		{[]string{"x.npy", "y.npy"}, ""},
		{[]string{"x.npy", "x.npy"}, `array "x" stored twice`},
		{[]string{"x", "x.npy"}, `array "x" stored twice`},
		{[]string{"y.npy", "x.npy", "x"}, `array "x" stored twice`},
	} {
		t.Run(strings.Join(tc.names, ","), func(t *testing.T) {
			var buf bytes.Buffer
			z := zip.NewWriter(&buf)
			for _, name := range tc.names {
				w, err := z.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
				if err != nil {
					t.Fatal(err)
				}
				w.Write(ok)
			}
			if err := z.Close(); err != nil {
				t.Fatal(err)
			}
			_, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "test.npz")
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (!errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), "test.npz: "+tc.want)):
				t.Fatalf("error %v; want data.ErrInvalid naming test.npz and saying %q", err, tc.want)
			}
		})
	}
}

// The writer refuses an array name it would write ambiguously: twice,
// empty, with a NUL or another control character, or not UTF-8.
func TestWriterRefusesNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string // "" for none
	}{
		{[]string{"a/probs", "b/probs"}, ""},
		{[]string{"a/probs", "a/probs"}, "written twice"},
		{[]string{""}, "empty"},
		{[]string{"c\x00d/probs"}, "control character"},
		{[]string{"c\rd/label"}, "control character"},
		{[]string{"c\u0085d"}, "control character"},
		{[]string{"\xff"}, "not UTF-8"},
	} {
		w := NewWriter(io.Discard)
		var err error
		for _, name := range tc.names {
			if _, err = w.Create(name, "<f8", []int{0}); err != nil {
				break
			}
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.names, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want an error saying %q", tc.names, err, tc.want)
		}
	}
}

// Booleans, float16 and Fortran-order arrays, as NumPy and pandas write
// them, read as their values: a boolean as 0 or 1, a float16 exactly,
// and ToC puts a Fortran-order array's elements in C order.
func TestBoolHalfFortran(t *testing.T) {
	for _, tc := range []struct {
		name, descr string
		body        []byte
		want        []float64
	}{
		{"bool", "|b1", []byte{0, 1, 2, 0}, []float64{0, 1, 1, 0}},
		// 0, 1, −2, 65504 (the largest), 2^-24 (the smallest subnormal), +Inf
		{"float16", "<f2", []byte{0, 0, 0, 0x3c, 0, 0xc0, 0xff, 0x7b, 1, 0, 0, 0x7c}, []float64{0, 1, -2, 65504, math.Ldexp(1, -24), math.Inf(1)}},
		{"float16 big-endian", ">f2", []byte{0x3c, 0, 0x35, 0x55}, []float64{1, 0.333251953125}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dict := "{'descr': '" + tc.descr + "', 'fortran_order': False, 'shape': (" + string(rune('0'+len(tc.want))) + ",), }"
			f := open(t, rawArchive(t, zip.Store, npy(dict, tc.body)))
			a, err := f.Array("x")
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float64, len(tc.want))
			if err := a.ReadFloat64(got); err != nil {
				t.Fatal(err)
			}
			if !equal(got, tc.want) {
				t.Errorf("%v, want %v", got, tc.want)
			}
		})
	}
	// A 2×3 array [[1 2 3] [4 5 6]] stored in Fortran order.
	body := make([]byte, 0, 24)
	for _, v := range []float32{1, 4, 2, 5, 3, 6} {
		body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
	}
	f := open(t, rawArchive(t, zip.Store, npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", body)))
	a, err := f.Array("x")
	if err != nil {
		t.Fatal(err)
	}
	src := make([]float32, 6)
	if err := a.ReadFloat32(src); err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 6)
	ToC(dst, src, a.Shape)
	if !a.Fortran || !slices.Equal(dst, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("fortran %v, C order %v", a.Fortran, dst)
	}
	// Three dimensions: element (i, j, k) of a 2×3×4 array is at
	// i + 2j + 6k in Fortran order.
	shape := []int{2, 3, 4}
	fsrc := make([]int, 24)
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				fsrc[i+2*j+6*k] = 100*i + 10*j + k
			}
		}
	}
	c := make([]int, 24)
	ToC(c, fsrc, shape)
	for n, v := range c {
		if want := 100*(n/12) + 10*(n/4%3) + n%4; v != want {
			t.Fatalf("C element %d = %d, want %d", n, v, want)
		}
	}
}
