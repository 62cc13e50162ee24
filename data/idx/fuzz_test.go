package idx

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"os"
	"testing"
)

// FuzzRead checks that no file, plain or gzip-compressed, makes the file
// reader panic, read past its header's promise, or accept data that is
// not exactly what the decoders accept in the decompressed bytes.
func FuzzRead(f *testing.F) {
	im, labels := fixture()
	good := encode(f, func(b *bytes.Buffer) error { return WriteImages(b, im) })
	goodLabels := encode(f, func(b *bytes.Buffer) error { return WriteLabels(b, labels) })
	for _, b := range [][]byte{good, goodLabels, gz(f, good), gz(f, goodLabels), gz(f, good[:20]), gz(f, append(bytes.Clone(good), 0))} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		plain := b
		if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				plain = nil
			} else {
				var out bytes.Buffer
				// Bounded: the reader must refuse what runs past its
				// promise, and promises here are tiny.
				_, err := out.ReadFrom(&limited{zr, 1 << 24})
				plain = out.Bytes()
				if err != nil {
					plain = nil
				}
			}
		}
		for _, kind := range []struct {
			header int
			p      promise
			decode func([]byte) error
		}{
			{imagesHeader, imagesPromise, func(b []byte) error { _, err := DecodeImages(b); return err }},
			{labelsHeader, labelsPromise, func(b []byte) error { _, err := DecodeLabels(b); return err }},
		} {
			got, err := read(bufio.NewReader(bytes.NewReader(b)), int64(len(b)), kind.header, kind.p)
			if err == nil {
				err = kind.decode(got)
			}
			if err != nil {
				continue
			}
			if plain == nil || !bytes.Equal(got, plain) {
				t.Fatalf("accepted %d bytes that are not the file's content", len(got))
			}
			if kind.decode(plain) != nil {
				t.Fatal("accepted a file the decoder refuses")
			}
		}
	})
}

// limited reads at most n bytes, then fails.
type limited struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (l *limited) Read(b []byte) (int, error) {
	if l.n <= 0 {
		return 0, os.ErrInvalid
	}
	if len(b) > l.n {
		b = b[:l.n]
	}
	n, err := l.r.Read(b)
	l.n -= n
	return n, err
}
