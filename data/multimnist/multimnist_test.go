package multimnist

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/data/idx"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// uniform returns n source images, image j filled with the value j+1, and
// labels j mod 10: any composite's pixels then tell which sources made it.
func uniform(n int) Labeled {
	im := &idx.Images{Count: n, Rows: Side0, Cols: Side0, Pixels: make([]byte, n*Side0*Side0)}
	labels := make([]byte, n)
	for j := range n {
		for p := range im.Image(j) {
			im.Image(j)[p] = byte(j + 1)
		}
		labels[j] = byte(j % 10)
	}
	return Labeled{im, labels}
}

func single(pixels []byte, label byte) Labeled {
	return Labeled{&idx.Images{Count: 1, Rows: Side0, Cols: Side0, Pixels: pixels}, []byte{label}}
}

// pattern is a 28×28 image with distinct, nonzero values.
func pattern() []byte {
	p := make([]byte, Side0*Side0)
	for i := range p {
		p[i] = byte(1 + i%251)
	}
	return p
}

// The geometry of the protocol: a known image on a blank partner lands
// exactly at [0,28)² (top-left) or [6,34)² (bottom-right), everything else
// stays zero, and overlapping pixels take the maximum.
func TestGeometry(t *testing.T) {
	blank := make([]byte, Side0*Side0)
	known := pattern()
	flat := bytes.Repeat([]byte{128}, Side0*Side0)
	tests := []struct {
		name        string
		top, bottom []byte
		want        func(r, c int) byte
	}{
		{"known top-left", known, blank, func(r, c int) byte {
			if r < Side0 && c < Side0 {
				return known[r*Side0+c]
			}
			return 0
		}},
		{"known bottom-right", blank, known, func(r, c int) byte {
			if r >= Offset && r < Offset+Side0 && c >= Offset && c < Offset+Side0 {
				return known[(r-Offset)*Side0+c-Offset]
			}
			return 0
		}},
		{"overlap takes the maximum", flat, known, func(r, c int) byte {
			var v byte
			if r < Side0 && c < Side0 {
				v = 128
			}
			if r >= Offset && r < Offset+Side0 && c >= Offset && c < Offset+Side0 {
				v = max(v, known[(r-Offset)*Side0+c-Offset])
			}
			return v
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Compose("geometry", single(tc.top, 3), single(tc.bottom, 8), 1, 0)
			if s.Len() != PerSource {
				t.Fatalf("%d composites from one source image, want %d", s.Len(), PerSource)
			}
			for i := range s.Len() {
				img := s.Image(i)
				for r := range Side {
					for c := range Side {
						if got, want := img[r*Side+c], tc.want(r, c); got != want {
							t.Fatalf("composite %d pixel (%d,%d) = %d, want %d", i, r, c, got, want)
						}
					}
				}
				if tl, br := s.Labels(i); tl != 3 || br != 8 {
					t.Errorf("composite %d labels (%d,%d), want (3,8)", i, tl, br)
				}
			}
		})
	}
}

func digest(s *Set) string {
	h := sha256.New()
	h.Write(s.pixels)
	h.Write(s.labels)
	return hex.EncodeToString(h.Sum(nil))
}

// The same seed gives the same bytes; another seed gives others. Every
// source image is the top-left of exactly PerSource composites, in order,
// and each composite's labels are those of the images it shows.
func TestComposeDeterministicAndLabeled(t *testing.T) {
	top, bottom := uniform(40), uniform(60)
	a := Compose("a", top, bottom, 7, 0)
	b := Compose("b", top, bottom, 7, 0)
	c := Compose("c", top, bottom, 8, 0)
	d := Compose("d", top, bottom, 7, 1)
	if digest(a) != digest(b) {
		t.Error("same seed, different composites")
	}
	if digest(a) == digest(c) || digest(a) == digest(d) {
		t.Error("another seed or stream gave the same composites")
	}
	if a.Len() != 80 {
		t.Fatalf("%d composites, want 80", a.Len())
	}
	partners := map[int]bool{}
	for k := range a.Len() {
		img := a.Image(k)
		i := int(img[0]) - 1                    // (0,0): only the top-left image
		j := int(img[(Side-3)*Side+Side-3]) - 1 // (33,33): only the bottom-right image
		if i != k/PerSource {
			t.Fatalf("composite %d shows top-left source %d, want %d", k, i, k/PerSource)
		}
		partners[j] = true
		tl, br := a.Labels(k)
		if tl != int(top.Labels[i]) || br != int(bottom.Labels[j]) {
			t.Fatalf("composite %d labels (%d,%d), sources say (%d,%d)", k, tl, br, top.Labels[i], bottom.Labels[j])
		}
	}
	// 80 uniform draws from 60 leave about 60·(80/60 − 1 + e^{−4/3}) ≈ 36
	// distinct partners on average; far fewer means the draws are broken.
	if len(partners) < 25 {
		t.Errorf("only %d distinct partners in 80 draws from 60", len(partners))
	}
}

func TestExampleScalesAndRangeChecks(t *testing.T) {
	s := Compose("x", single(pattern(), 1), single(make([]byte, Side0*Side0), 2), 1, 0)
	x := make([]float32, Side*Side)
	y := make([]float32, 2)
	if err := s.Example(1, x, y); err != nil {
		t.Fatal(err)
	}
	if x[0] != float32(pattern()[0])/255 || x[Side*Side-1] != 0 || y[0] != 1 || y[1] != 2 {
		t.Errorf("x[0]=%v x[last]=%v y=%v", x[0], x[Side*Side-1], y)
	}
	if err := s.Example(2, x, y); err == nil {
		t.Error("example 2 of 2 read without error")
	}
}

// writeSource writes the four files of a small source under dir, images
// gzip-compressed when gz is set, and returns a Source whose checksums
// match them.
func writeSource(t *testing.T, dir string, gz bool, labels []byte) Source {
	t.Helper()
	src := Source{Name: "Fixture", Subdir: "fixture", ClassNames: MNIST.ClassNames, SHA256: map[string]string{}, Fetch: "make the fixture"}
	if err := os.MkdirAll(filepath.Join(dir, "fixture"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, split := range []Split{Train, Test} {
		l := uniform(len(labels))
		copy(l.Labels, labels)
		files := map[string]func(w *bytes.Buffer) error{
			string(split) + "-images-idx3-ubyte": func(w *bytes.Buffer) error { return idx.WriteImages(w, l.Images) },
			string(split) + "-labels-idx1-ubyte": func(w *bytes.Buffer) error { return idx.WriteLabels(w, l.Labels) },
		}
		for name, write := range files {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b.Bytes())
			src.SHA256[name] = hex.EncodeToString(sum[:])
			content, path := b.Bytes(), filepath.Join(dir, "fixture", name)
			if gz {
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				zw.Write(content)
				zw.Close()
				content, path = z.Bytes(), path+".gz"
			}
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return src
}

func TestReadPlainAndGzip(t *testing.T) {
	for _, gz := range []bool{false, true} {
		dir := t.TempDir()
		src := writeSource(t, dir, gz, []byte{4, 2, 9})
		l, err := src.Read(dir, Train)
		if err != nil {
			t.Fatalf("gz=%v: %v", gz, err)
		}
		if l.Len() != 3 || l.Labels[2] != 9 || l.Images.Image(1)[0] != 2 {
			t.Errorf("gz=%v: read %d examples, labels %v", gz, l.Len(), l.Labels)
		}
	}
}

func TestReadErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := MNIST.Read(dir, Train)
		if !errors.Is(err, data.ErrMissing) {
			t.Fatalf("error %v is not ErrMissing", err)
		}
		for _, want := range []string{filepath.Join(dir, "mnist", "train-images-idx3-ubyte"), "train-images-idx3-ubyte.gz", "scripts/fetch-data"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	})
	t.Run("checksum", func(t *testing.T) {
		dir := t.TempDir()
		src := writeSource(t, dir, false, []byte{4, 2, 9})
		src.SHA256["train-labels-idx1-ubyte"] = strings.Repeat("0", 64)
		_, err := src.Read(dir, Train)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "fixture", "train-labels-idx1-ubyte")+": content has SHA-256") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("label out of range", func(t *testing.T) {
		dir := t.TempDir()
		src := writeSource(t, dir, false, []byte{4, 12, 9})
		_, err := src.Read(dir, Train)
		if err == nil || !strings.Contains(err.Error(), "label 12 of example 1 is not a class 0..9") {
			t.Errorf("error %v", err)
		}
	})
}

// On the real data: each variant has 120,000 and 20,000 composites, the
// top-left labels are exactly twice the source's histogram, and every
// class holds between 8% and 12% of each task (MNIST's most and least
// frequent digits, 1 and 5, have 11.2% and 9.0%).
func TestRealVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("reads and composes the real data sets")
	}
	dir, err := data.Dir("")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Variants {
		t.Run(v.Name, func(t *testing.T) {
			train, test, err := v.Load(dir, 1)
			testenv.CheckData(t, err)
			for _, c := range []struct {
				s    *Set
				want int
			}{{train, 120000}, {test, 20000}} {
				if c.s.Len() != c.want {
					t.Errorf("%s: %d composites, want %d", c.s.Name(), c.s.Len(), c.want)
				}
				h := c.s.Histogram()
				t.Logf("%s top-left %v bottom-right %v", c.s.Name(), h[0], h[1])
				for task := range h {
					for class, n := range h[task] {
						if f := float64(n) / float64(c.s.Len()); f < 0.08 || f > 0.12 {
							t.Errorf("%s task %d class %d: fraction %.3f", c.s.Name(), task, class, f)
						}
					}
				}
			}
			src, err := v.TopLeft.Read(dir, Train)
			if err != nil {
				t.Fatal(err)
			}
			var want [10]int
			for _, l := range src.Labels {
				want[l] += PerSource
			}
			if got := train.Histogram()[0]; got != want {
				t.Errorf("top-left histogram %v, want twice the source's: %v", got, want)
			}
		})
	}
}

// The validation split shares no source image with the training split:
// with the fixture's uniform images (image j filled with j+1), a
// composite's pixel (0,0) names its top-left source and pixel (33,33) its
// partner. Without a validation split the training set is Load's.
func TestLoadValid(t *testing.T) {
	dir := t.TempDir()
	labels := make([]byte, 40)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	src := writeSource(t, dir, false, labels)
	v := Variant{Name: "fixture", TopLeft: src, BottomRight: src}

	train, valid, test, err := v.LoadValid(dir, 3, 10)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 70 || valid.Len() != 10 || test.Len() != 80 {
		t.Fatalf("sizes %d/%d/%d, want 70/10/80", train.Len(), valid.Len(), test.Len())
	}
	sources := func(s *Set, i int) (top, partner int) {
		im := s.Image(i)
		return int(im[0]) - 1, int(im[(Side-Offset-1)*Side+Side-Offset-1]) - 1
	}
	for i := range train.Len() {
		if top, partner := sources(train, i); top >= 35 || partner >= 35 {
			t.Errorf("training composite %d uses sources %d and %d, want both < 35", i, top, partner)
		}
	}
	for i := range valid.Len() {
		top, partner := sources(valid, i)
		if top < 35 || partner < 35 {
			t.Errorf("validation composite %d uses sources %d and %d, want both ≥ 35", i, top, partner)
		}
		if tl, br := valid.Labels(i); tl != top%10 || br != partner%10 {
			t.Errorf("validation composite %d labelled %d/%d, sources %d/%d", i, tl, br, top, partner)
		}
	}

	whole, test0, err := v.Load(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	train0, valid0, _, err := v.LoadValid(dir, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if valid0 != nil || !bytes.Equal(train0.pixels, whole.pixels) || !bytes.Equal(train0.labels, whole.labels) {
		t.Error("LoadValid with 0 differs from Load")
	}
	if !bytes.Equal(test.pixels, test0.pixels) {
		t.Error("the test set depends on the validation size")
	}

	for _, bad := range []int{-2, 3, 80, 1000} {
		if _, _, _, err := v.LoadValid(dir, 3, bad); err == nil {
			t.Errorf("validation size %d accepted", bad)
		}
	}
}
