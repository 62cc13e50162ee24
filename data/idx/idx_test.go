package idx

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a small image set with distinct pixel values, so that any
// misplaced byte shows.
func fixture() (*Images, []byte) {
	im := &Images{Count: 3, Rows: 4, Cols: 5, Pixels: make([]byte, 3*4*5)}
	for i := range im.Pixels {
		im.Pixels[i] = byte(i * 7)
	}
	return im, []byte{7, 0, 9}
}

func encode(t testing.TB, write func(*bytes.Buffer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadLabeledPlainAndGzip(t *testing.T) {
	im, labels := fixture()
	imgBytes := encode(t, func(b *bytes.Buffer) error { return WriteImages(b, im) })
	lblBytes := encode(t, func(b *bytes.Buffer) error { return WriteLabels(b, labels) })
	// The layout the format defines, written out by hand: magic, count,
	// rows, cols, then the pixels.
	wantHead := []byte{0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5}
	if !bytes.Equal(imgBytes[:16], wantHead) {
		t.Fatalf("image header % x, want % x", imgBytes[:16], wantHead)
	}
	if !bytes.Equal(lblBytes, []byte{0, 0, 8, 1, 0, 0, 0, 3, 7, 0, 9}) {
		t.Fatalf("label file % x", lblBytes)
	}
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		ib, lb := imgBytes, lblBytes
		if compress {
			ib, lb = gz(t, ib), gz(t, lb)
		}
		gotIm, gotLabels, err := ReadLabeled(writeFile(t, dir, "img", ib), writeFile(t, dir, "lbl", lb))
		if err != nil {
			t.Fatalf("gzip=%v: %v", compress, err)
		}
		if gotIm.Count != 3 || gotIm.Rows != 4 || gotIm.Cols != 5 || !bytes.Equal(gotIm.Pixels, im.Pixels) {
			t.Errorf("gzip=%v: images %d×%d×%d differ from what was written", compress, gotIm.Count, gotIm.Rows, gotIm.Cols)
		}
		if !bytes.Equal(gotIm.Image(1), im.Pixels[20:40]) {
			t.Errorf("gzip=%v: Image(1) = %v", compress, gotIm.Image(1))
		}
		if !bytes.Equal(gotLabels, labels) {
			t.Errorf("gzip=%v: labels %v, want %v", compress, gotLabels, labels)
		}
	}
}

// Each corrupt file must be refused with its own message, naming the file.
func TestCorruptFiles(t *testing.T) {
	im, labels := fixture()
	good := encode(t, func(b *bytes.Buffer) error { return WriteImages(b, im) })
	goodLabels := encode(t, func(b *bytes.Buffer) error { return WriteLabels(b, labels) })
	with := func(b []byte, at int, v ...byte) []byte {
		c := bytes.Clone(b)
		copy(c[at:], v)
		return c
	}
	tests := []struct {
		name   string
		images []byte
		labels []byte
		want   string // in the message
	}{
		{"bad image magic", with(good, 2, 9, 9), goodLabels, "bad magic number 0x00000909"},
		{"labels given as images", goodLabels, goodLabels, "0x00000801 (that of a label file): image files start with 0x00000803"},
		{"bad label magic", good, with(goodLabels, 3, 4), "bad magic number 0x00000804"},
		{"images truncated", good[:len(good)-1], goodLabels, "truncated: the header promises 3 images of 4×5 (60 bytes of data) but the file has 59"},
		{"labels truncated", good, goodLabels[:9], "truncated: the header promises 3 labels (3 bytes of data) but the file has 1"},
		{"header truncated", good[:10], goodLabels, "truncated header: 10 bytes"},
		{"trailing bytes", append(bytes.Clone(good), 1, 2), goodLabels, "2 bytes after the 3 images of 4×5"},
		{"count disagrees with length", with(good, 7, 4), goodLabels, "promises 4 images of 4×5 (80 bytes of data) but the file has 60"},
		{"huge header", with(good, 4, 0xff, 0xff, 0xff, 0xff), goodLabels, "implausible header"},
		{"mismatched counts", good, encode(t, func(b *bytes.Buffer) error { return WriteLabels(b, labels[:2]) }), "has 3 images but"},
		{"broken gzip", gz(t, good)[:30], goodLabels, "gzip: unexpected EOF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ip := writeFile(t, dir, "images.idx", tc.images)
			lp := writeFile(t, dir, "labels.idx", tc.labels)
			_, _, err := ReadLabeled(ip, lp)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if !strings.Contains(msg, dir) {
				t.Errorf("error %q does not name the file", msg)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := ReadImages(filepath.Join(t.TempDir(), "nope"))
	if !os.IsNotExist(err) {
		t.Errorf("error %v, want a not-exist error", err)
	}
}

// FuzzDecode checks that no input makes the decoders panic or accept a file
// that does not round-trip exactly.
func FuzzDecode(f *testing.F) {
	im, labels := fixture()
	good := encode(f, func(b *bytes.Buffer) error { return WriteImages(b, im) })
	goodLabels := encode(f, func(b *bytes.Buffer) error { return WriteLabels(b, labels) })
	f.Add(good)
	f.Add(goodLabels)
	f.Add(good[:17])
	f.Add([]byte{0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if im, err := DecodeImages(b); err == nil {
			again := encode(t, func(w *bytes.Buffer) error { return WriteImages(w, im) })
			if !bytes.Equal(again, b) {
				t.Fatalf("image file accepted but does not round-trip")
			}
		}
		if l, err := DecodeLabels(b); err == nil {
			again := encode(t, func(w *bytes.Buffer) error { return WriteLabels(w, l) })
			if !bytes.Equal(again, b) {
				t.Fatalf("label file accepted but does not round-trip")
			}
		}
	})
}
