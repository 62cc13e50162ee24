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
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/internal/sysmem"
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

// Header sizes of the two kinds of file.
const (
	imagesHeader = 16
	labelsHeader = 8
)

// imagesData checks an image file's header (at least its first 16 bytes)
// and returns the image count, rows, columns and the bytes of data it
// promises.
func imagesData(b []byte) (count, rows, cols uint32, want uint64, err error) {
	if len(b) >= 4 {
		if m := binary.BigEndian.Uint32(b); m != ImagesMagic {
			return 0, 0, 0, 0, magicError(m, ImagesMagic, "image")
		}
	}
	if len(b) < imagesHeader {
		return 0, 0, 0, 0, fmt.Errorf("truncated header: %d bytes, an image file's header has %d", len(b), imagesHeader)
	}
	count = binary.BigEndian.Uint32(b[4:])
	rows = binary.BigEndian.Uint32(b[8:])
	cols = binary.BigEndian.Uint32(b[12:])
	if count > maxCount || rows > maxCount || cols > maxCount || uint64(rows)*uint64(cols) > maxCount {
		return 0, 0, 0, 0, fmt.Errorf("implausible header: %d images of %d×%d", count, rows, cols)
	}
	return count, rows, cols, uint64(count) * uint64(rows) * uint64(cols), nil
}

// labelsData checks a label file's header (at least its first 8 bytes)
// and returns the bytes of data it promises, one per label.
func labelsData(b []byte) (uint64, error) {
	if len(b) >= 4 {
		if m := binary.BigEndian.Uint32(b); m != LabelsMagic {
			return 0, magicError(m, LabelsMagic, "label")
		}
	}
	if len(b) < labelsHeader {
		return 0, fmt.Errorf("truncated header: %d bytes, a label file's header has %d", len(b), labelsHeader)
	}
	return uint64(binary.BigEndian.Uint32(b[4:])), nil
}

func imagesWhat(count, rows, cols uint32) string {
	return fmt.Sprintf("%d images of %d×%d", count, rows, cols)
}

func labelsWhat(count uint64) string { return fmt.Sprintf("%d labels", count) }

// DecodeImages parses an IDX image file held in b (already decompressed).
func DecodeImages(b []byte) (*Images, error) {
	count, rows, cols, want, err := imagesData(b)
	if err != nil {
		return nil, err
	}
	if got := uint64(len(b) - imagesHeader); got != want {
		return nil, lengthError(got, want, imagesWhat(count, rows, cols))
	}
	return &Images{Count: int(count), Rows: int(rows), Cols: int(cols), Pixels: b[imagesHeader:]}, nil
}

// DecodeLabels parses an IDX label file held in b (already decompressed).
func DecodeLabels(b []byte) ([]byte, error) {
	count, err := labelsData(b)
	if err != nil {
		return nil, err
	}
	if got := uint64(len(b) - labelsHeader); got != count {
		return nil, lengthError(got, count, labelsWhat(count))
	}
	return b[labelsHeader:], nil
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
	b, err := readFile(path, imagesHeader, imagesPromise)
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
	b, err := readFile(path, labelsHeader, labelsPromise)
	if err != nil {
		return nil, err
	}
	l, err := DecodeLabels(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// promise checks a header and says how many bytes of data it promises,
// and what.
type promise func(header []byte) (uint64, string, error)

func imagesPromise(h []byte) (uint64, string, error) {
	count, rows, cols, want, err := imagesData(h)
	return want, imagesWhat(count, rows, cols), err
}

func labelsPromise(h []byte) (uint64, string, error) {
	want, err := labelsData(h)
	return want, labelsWhat(want), err
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

// readFile returns the content of the regular file at path (package
// regfile: a device, a pipe or a directory is refused without blocking),
// decompressed if it is gzip data. Compression is recognised by the gzip
// magic bytes, not by the file name: an IDX file starts with two zero
// bytes, so the two cannot be confused.
func readFile(path string, header int, p promise) ([]byte, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := read(bufio.NewReader(f), st.Size(), header, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// read reads an IDX file of size bytes, plain or gzip-compressed, from r:
// its header, then at most the data the header promises and one byte
// more, for Decode to judge. The promise is checked against this
// machine's memory, and a plain file's size against it, before any data
// is read, and decompression stops one byte past it: neither a huge file
// nor a gzip bomb can exhaust memory.
func read(r *bufio.Reader, size int64, header int, p promise) ([]byte, error) {
	magic, _ := r.Peek(2)
	compressed := bytes.Equal(magic, []byte{0x1f, 0x8b})
	var src io.Reader = r
	wrap := func(err error) error { return err }
	if compressed {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		src = zr
		wrap = func(err error) error { return fmt.Errorf("gzip: %w", err) }
	}
	b := make([]byte, header)
	n, err := io.ReadFull(src, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, wrap(err)
	}
	b = b[:n]
	want, what, err := p(b)
	if err != nil || n < header {
		return b, nil // Decode says what is wrong with the header
	}
	if !compressed && uint64(size-int64(header)) != want {
		return nil, lengthError(uint64(size-int64(header)), want, what)
	}
	if total, source := sysmem.Total(); float64(want) > total/2 {
		return nil, fmt.Errorf("the header promises %s (%s of data), more than half of this machine's memory (%s, %s)",
			what, sysmem.Format(float64(want)), sysmem.Format(total), source)
	}
	rest, err := io.ReadAll(io.LimitReader(src, int64(want)+1))
	if err != nil {
		return nil, wrap(err)
	}
	if uint64(len(rest)) > want {
		return nil, wrap(fmt.Errorf("more data than the %s (%d bytes) the header promises", what, want))
	}
	return append(b, rest...), nil
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
