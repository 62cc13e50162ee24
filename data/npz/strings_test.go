package npz

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
)

// WriteStrings writes what numpy.array(["a", "héllo", ""]) is: <U5,
// each string as 5 UTF-32 code points, zero-padded (20 bytes each).
func TestWriteStrings(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteStrings("id", []string{"a", "héllo", ""}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStrings("id", nil); err == nil {
		t.Error("a second array id was written")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	f, err := z.Open("id.npy")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	hlen := int(b[8]) | int(b[9])<<8
	header, body := string(b[10:10+hlen]), b[10+hlen:]
	if !strings.Contains(header, "'descr': '<U5'") || !strings.Contains(header, "'shape': (3,)") || (10+hlen)%64 != 0 {
		t.Errorf("header %q", header)
	}
	want := []byte{}
	for _, s := range []string{"a\x00\x00\x00\x00", "héllo", "\x00\x00\x00\x00\x00"} {
		for _, r := range s {
			want = append(want, byte(r), byte(r>>8), 0, 0)
		}
	}
	if !bytes.Equal(body, want) {
		t.Errorf("body % x, want % x", body, want)
	}
}
