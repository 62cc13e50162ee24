// Package idx reads the IDX files in which MNIST and Fashion-MNIST are
// distributed, plain or gzip-compressed.
//
// The format (LeCun et al., http://yann.lecun.com/exdb/mnist/): big-endian;
// an image file is the magic number 0x00000803, the image count, the rows,
// the columns, then count·rows·cols unsigned bytes, row-major; a label file
// is the magic number 0x00000801, the count, then count unsigned bytes.
// The reader is strict: a file whose magic, header or length disagree is an
// error naming the file and the problem, never a short data set.
package idx

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Magic numbers of the two IDX file kinds used here: unsigned bytes with
// three dimensions (images) and with one (labels).
const (
	ImagesMagic = 0x00000803
	LabelsMagic = 0x00000801
)

// Images is the content of an IDX image file.
type Images struct {
	Count, Rows, Cols int
	// Pixels holds the images one after another, each row-major,
	// Rows·Cols bytes.
	Pixels []byte
}

// Image returns the pixels of image i.
func (im *Images) Image(i int) []byte {
	n := im.Rows * im.Cols
	return im.Pixels[i*n : (i+1)*n]
}

// maxCount bounds every header field so that their product cannot
// overflow; real files are far below it.
const maxCount = 1 << 30

// DecodeImages parses an IDX image file held in b (already decompressed).
func DecodeImages(b []byte) (*Images, error) {
	const header = 16
	if len(b) >= 4 {
		if m := binary.BigEndian.Uint32(b); m != ImagesMagic {
			return nil, magicError(m, ImagesMagic, "image")
		}
	}
	if len(b) < header {
		return nil, fmt.Errorf("truncated header: %d bytes, an image file's header has %d", len(b), header)
	}
	count := binary.BigEndian.Uint32(b[4:])
	rows := binary.BigEndian.Uint32(b[8:])
	cols := binary.BigEndian.Uint32(b[12:])
	if count > maxCount || rows > maxCount || cols > maxCount || uint64(rows)*uint64(cols) > maxCount {
		return nil, fmt.Errorf("implausible header: %d images of %d×%d", count, rows, cols)
	}
	want := uint64(count) * uint64(rows) * uint64(cols)
	if got := uint64(len(b) - header); got != want {
		return nil, lengthError(got, want, fmt.Sprintf("%d images of %d×%d", count, rows, cols))
	}
	return &Images{Count: int(count), Rows: int(rows), Cols: int(cols), Pixels: b[header:]}, nil
}

// DecodeLabels parses an IDX label file held in b (already decompressed).
func DecodeLabels(b []byte) ([]byte, error) {
	const header = 8
	if len(b) >= 4 {
		if m := binary.BigEndian.Uint32(b); m != LabelsMagic {
			return nil, magicError(m, LabelsMagic, "label")
		}
	}
	if len(b) < header {
		return nil, fmt.Errorf("truncated header: %d bytes, a label file's header has %d", len(b), header)
	}
	count := uint64(binary.BigEndian.Uint32(b[4:]))
	if got := uint64(len(b) - header); got != count {
		return nil, lengthError(got, count, fmt.Sprintf("%d labels", count))
	}
	return b[header:], nil
}

func magicError(got, want uint32, kind string) error {
	other := ""
	switch got {
	case ImagesMagic:
		other = " (that of an image file)"
	case LabelsMagic:
		other = " (that of a label file)"
	}
	return fmt.Errorf("bad magic number 0x%08x%s: %s files start with 0x%08x", got, other, kind, want)
}

func lengthError(got, want uint64, what string) error {
	if got < want {
		return fmt.Errorf("truncated: the header promises %s (%d bytes of data) but the file has %d", what, want, got)
	}
	return fmt.Errorf("%d bytes after the %s the header promises", got-want, what)
}

// ReadImages reads an IDX image file, plain or gzip-compressed.
func ReadImages(path string) (*Images, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	im, err := DecodeImages(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return im, nil
}

// ReadLabels reads an IDX label file, plain or gzip-compressed.
func ReadLabels(path string) ([]byte, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	l, err := DecodeLabels(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// ReadLabeled reads an image file and its label file and checks that they
// hold the same number of examples.
func ReadLabeled(imagesPath, labelsPath string) (*Images, []byte, error) {
	im, err := ReadImages(imagesPath)
	if err != nil {
		return nil, nil, err
	}
	labels, err := ReadLabels(labelsPath)
	if err != nil {
		return nil, nil, err
	}
	if len(labels) != im.Count {
		return nil, nil, fmt.Errorf("%s has %d images but %s has %d labels", imagesPath, im.Count, labelsPath, len(labels))
	}
	return im, labels, nil
}

// readFile returns the content of path, decompressed if it is gzip data.
// Compression is recognised by the gzip magic bytes, not by the file name:
// an IDX file starts with two zero bytes, so the two cannot be confused.
func readFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		return raw, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: gzip: %w", path, err)
	}
	var out bytes.Buffer
	if _, err := io.Copy(&out, zr); err != nil {
		return nil, fmt.Errorf("%s: gzip: %w", path, err)
	}
	return out.Bytes(), nil
}

// WriteImages writes im in the IDX image format, uncompressed.
func WriteImages(w io.Writer, im *Images) error {
	if len(im.Pixels) != im.Count*im.Rows*im.Cols {
		return fmt.Errorf("idx: %d pixels for %d images of %d×%d", len(im.Pixels), im.Count, im.Rows, im.Cols)
	}
	var h [16]byte
	binary.BigEndian.PutUint32(h[0:], ImagesMagic)
	binary.BigEndian.PutUint32(h[4:], uint32(im.Count))
	binary.BigEndian.PutUint32(h[8:], uint32(im.Rows))
	binary.BigEndian.PutUint32(h[12:], uint32(im.Cols))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(im.Pixels)
	return err
}

// WriteLabels writes labels in the IDX label format, uncompressed.
func WriteLabels(w io.Writer, labels []byte) error {
	var h [8]byte
	binary.BigEndian.PutUint32(h[0:], LabelsMagic)
	binary.BigEndian.PutUint32(h[4:], uint32(len(labels)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(labels)
	return err
}
