// Package npz reads and writes NumPy's .npz archives: a zip file of .npy
// arrays (numpy.savez, numpy.savez_compressed), as the file data set
// (package data/files) reads them and cmd/predict writes them.
//
// Reading is defensive, because the files come from users: the .npy
// header is parsed strictly (at most MaxHeader bytes, the three keys of
// the format and nothing else), and an array's size, taken from its
// shape, must be exactly what its zip entry holds, and the entry no
// larger than its compressed bytes can expand to, before anything is
// allocated. So a header that claims 2^40 elements in a small file is an
// error, not an allocation. Every error about a file's content wraps
// data.ErrInvalid and names the file and the array.
//
// Element types are what NumPy and pandas write of numbers: booleans,
// integers of 8 to 64 bits, float16, float32 and float64, either byte
// order. An array in Fortran order (numpy.asfortranarray, or what
// DataFrame.to_numpy often gives) is read in its storage order, and
// ToC puts it in C order.
//
// github.com/sbinet/npyio writes the same format (the tests check that
// what it writes reads back here); its reader is not used, because it
// slices its header without bounds checks (a header without a newline
// panics) and allocates the header length the file states.
package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/regfile"
)

// MaxHeader is the longest .npy header read, in bytes. NumPy writes
// headers of a few dozen bytes and itself refuses those over 10,000.
const MaxHeader = 1 << 16

// MaxElements bounds an array's element count, far above any data set
// that fits in memory, so that sizes computed from a shape cannot
// overflow.
const MaxElements = 1 << 50

// maxDeflateRatio is the largest factor by which deflate expands its
// input (258-byte matches in about 2 bits each: about 1032).
const maxDeflateRatio = 1032

// Magic opens every .npy file.
var Magic = []byte("\x93NUMPY")

// A DType is an array's element type, from the header's descr.
type DType struct {
	Kind  byte // 'u' unsigned, 'i' signed integer, 'f' float, 'b' boolean
	Size  int  // bytes per element: 1, 2, 4 or 8
	Order binary.ByteOrder
}

// String is the type as NumPy names it, e.g. float32.
func (d DType) String() string {
	if d.Kind == 'b' {
		return "bool"
	}
	name := map[byte]string{'u': "uint", 'i': "int", 'f': "float"}[d.Kind]
	return fmt.Sprintf("%s%d", name, 8*d.Size)
}

// Float reports whether d is a floating-point type.
func (d DType) Float() bool { return d.Kind == 'f' }

// ParseDType reads a descr such as "<f4", "|u1", ">i8", "|b1" or "<f2".
// Other types (complex numbers, strings, objects, structured types,
// dates) are errors.
func ParseDType(descr string) (DType, error) {
	if len(descr) != 3 {
		return DType{}, fmt.Errorf("element type %q is not a number type NumPy writes as <f4, |u1, ...", descr)
	}
	var d DType
	switch descr[0] {
	case '<', '|', '=':
		d.Order = binary.LittleEndian
	case '>':
		d.Order = binary.BigEndian
	default:
		return DType{}, fmt.Errorf("element type %q has byte order %q", descr, descr[0])
	}
	d.Kind = descr[1]
	d.Size = int(descr[2] - '0')
	ok := false
	switch d.Kind {
	case 'u', 'i':
		ok = d.Size == 1 || d.Size == 2 || d.Size == 4 || d.Size == 8
	case 'f':
		ok = d.Size == 2 || d.Size == 4 || d.Size == 8
	case 'b':
		ok = d.Size == 1
	}
	if !ok {
		return DType{}, fmt.Errorf("element type %q is not a boolean, an integer or a float16/32/64", descr)
	}
	return d, nil
}

// Header is a .npy array's header.
type Header struct {
	Descr string
	DType DType
	// Shape is the array's shape; empty for a scalar.
	Shape []int
	// Fortran is true where the elements are stored in Fortran
	// (column-major) order, the first index varying fastest: what
	// numpy.save writes of a transposed or pandas-made array. The
	// readers give them in that order; ToC reorders them.
	Fortran bool
	// Len is the number of elements, the product of Shape.
	Len int
	// Bytes is the length of the header, magic and padding included:
	// the array's data starts there.
	Bytes int
}

// ReadHeader reads a .npy header from r and leaves r at the data.
func ReadHeader(r io.Reader) (Header, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		return Header{}, fmt.Errorf("reading the .npy magic: %w", eof(err))
	}
	if !bytes.Equal(pre[:6], Magic) {
		return Header{}, errors.New("not a .npy array (no \\x93NUMPY magic)")
	}
	var n, skip int
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return Header{}, fmt.Errorf("reading the header length: %w", eof(err))
		}
		n, skip = int(binary.LittleEndian.Uint16(pre[8:10])), 10
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return Header{}, fmt.Errorf("reading the header length: %w", eof(err))
		}
		u := binary.LittleEndian.Uint32(l[:])
		if u > MaxHeader {
			return Header{}, fmt.Errorf("header of %d bytes, more than the %d read", u, MaxHeader)
		}
		n, skip = int(u), 12
	default:
		return Header{}, fmt.Errorf("format version %d.%d, not 1, 2 or 3", pre[6], pre[7])
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return Header{}, fmt.Errorf("reading the %d-byte header: %w", n, eof(err))
	}
	h, err := parseDict(string(buf))
	if err != nil {
		return Header{}, fmt.Errorf("header %q: %w", clip(string(buf)), err)
	}
	h.Bytes = skip + n
	return h, nil
}

// eof turns the io.EOF of a file that ends early into
// io.ErrUnexpectedEOF: at a header, every end is unexpected.
func eof(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// parseDict parses the header's Python dict literal, as numpy writes it:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } and
// padding.
func parseDict(s string) (Header, error) {
	p := &parser{s: s}
	var h Header
	seen := map[string]bool{}
	p.space()
	if !p.eat('{') {
		return h, errors.New("not a dict")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return h, err
		}
		p.space()
		if !p.eat(':') {
			return h, fmt.Errorf("no ':' after %q", key)
		}
		p.space()
		if seen[key] {
			return h, fmt.Errorf("key %q twice", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			if h.Descr, err = p.str(); err != nil {
				return h, fmt.Errorf("descr: %w", err)
			}
			if h.DType, err = ParseDType(h.Descr); err != nil {
				return h, err
			}
		case "fortran_order":
			switch {
			case p.word("False"):
			case p.word("True"):
				h.Fortran = true
			default:
				return h, errors.New("fortran_order is not True or False")
			}
		case "shape":
			if h.Shape, err = p.shape(); err != nil {
				return h, fmt.Errorf("shape: %w", err)
			}
		default:
			return h, fmt.Errorf("unknown key %q", key)
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return h, fmt.Errorf("no ',' or '}' after %q's value", key)
		}
		break
	}
	if strings.TrimRight(p.s[p.i:], " \n\x00") != "" {
		return h, errors.New("text after the dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("no %q key", k)
		}
	}
	h.Len = 1
	for _, d := range h.Shape {
		if d != 0 && h.Len > MaxElements/d {
			return h, fmt.Errorf("shape %v has more than 2^50 elements", h.Shape)
		}
		h.Len *= d
	}
	return h, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) word(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str reads a quoted string without escapes, as numpy's keys and
// descrs are.
func (p *parser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("expected a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "\\\n") {
		return "", errors.New("string with an escape or newline")
	}
	p.i += end + 2
	return v, nil
}

// shape reads a tuple of non-negative integers: (), (3,), (3, 4).
func (p *parser) shape() ([]int, error) {
	if !p.eat('(') {
		return nil, errors.New("not a tuple")
	}
	shape := []int{}
	for {
		p.space()
		if p.eat(')') {
			return shape, nil
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if start == p.i {
			return nil, fmt.Errorf("expected a dimension at %q", clip(p.s[start:]))
		}
		d, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
		if err != nil || d > MaxElements {
			return nil, fmt.Errorf("dimension %s is too large", p.s[start:p.i])
		}
		shape = append(shape, int(d))
		if len(shape) > 32 {
			return nil, errors.New("more than 32 dimensions")
		}
		p.space()
		if !p.eat(',') {
			p.space()
			if !p.eat(')') {
				return nil, errors.New("expected ',' or ')'")
			}
			if len(shape) == 1 {
				return nil, errors.New("a 1-tuple without its comma")
			}
			return shape, nil
		}
	}
}

// File is an open .npz archive.
type File struct {
	path  string
	z     *zip.Reader
	close func() error
}

// Open opens the .npz archive at path, a regular file (package
// internal/regfile: a named pipe or a device is refused, not read).
func Open(path string) (*File, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	z, err := NewReader(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	z.close = f.Close
	return z, nil
}

// NewReader reads an archive of size bytes from r; path names it in
// errors.
func NewReader(r io.ReaderAt, size int64, path string) (*File, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: not a .npz (zip) archive, or truncated: %w", data.ErrInvalid, path, err)
	}
	seen := map[string]bool{}
	for _, e := range z.File {
		name := strings.TrimSuffix(e.Name, ".npy")
		if seen[name] {
			// NumPy would load the last of them, this reader the first:
			// the model would train on data the user does not see.
			return nil, fmt.Errorf("%w: %s: array %q stored twice", data.ErrInvalid, path, name)
		}
		seen[name] = true
	}
	return &File{path: path, z: z, close: func() error { return nil }}, nil
}

// Close closes the file.
func (f *File) Close() error { return f.close() }

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Names lists the archive's arrays, without the .npy suffix.
func (f *File) Names() []string {
	var names []string
	for _, e := range f.z.File {
		names = append(names, strings.TrimSuffix(e.Name, ".npy"))
	}
	return names
}

// Has reports whether the archive holds the array name.
func (f *File) Has(name string) bool { return f.entry(name) != nil }

func (f *File) entry(name string) *zip.File {
	for _, e := range f.z.File {
		// numpy.savez appends .npy to each name; np.load strips it,
		// and takes a name without it as it is (npyio writes those).
		if e.Name == name+".npy" || e.Name == name {
			return e
		}
	}
	return nil
}

// Array opens the array name for reading and checks its header against
// the entry's size. The caller closes it.
func (f *File) Array(name string) (*Array, error) {
	e := f.entry(name)
	if e == nil {
		return nil, fmt.Errorf("%w: %s: no array %q (it holds %s)", data.ErrInvalid, f.path, name, strings.Join(f.Names(), ", "))
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: array %s: %s", data.ErrInvalid, f.path, name, fmt.Sprintf(format, args...))
	}
	size := e.UncompressedSize64
	switch e.Method {
	case zip.Store:
		if size != e.CompressedSize64 {
			return nil, bad("stored entry of %d bytes says it expands to %d", e.CompressedSize64, size)
		}
	case zip.Deflate:
		if e.CompressedSize64 > math.MaxUint64/maxDeflateRatio || size > maxDeflateRatio*e.CompressedSize64+MaxHeader {
			return nil, bad("%d compressed bytes cannot expand to the %d the entry says", e.CompressedSize64, size)
		}
	default:
		return nil, bad("zip compression method %d, not stored or deflate", e.Method)
	}
	rc, err := e.Open()
	if err != nil {
		return nil, bad("%v", err)
	}
	h, err := ReadHeader(rc)
	if err != nil {
		rc.Close()
		return nil, bad("%v", err)
	}
	if uint64(h.Bytes) > size {
		rc.Close()
		return nil, bad("the entry of %d bytes is shorter than its header", size)
	}
	// Len ≤ 2^50 and Size ≤ 8: no overflow.
	if need, have := uint64(h.Len)*uint64(h.DType.Size), size-uint64(h.Bytes); need != have {
		rc.Close()
		what := "truncated"
		if need < have {
			what = "has trailing bytes"
		}
		return nil, bad("%s: shape %v of %s needs %d bytes, the entry holds %d", what, h.Shape, h.DType, need, have)
	}
	return &Array{Header: h, file: f.path, name: name, r: rc}, nil
}

// Array reads one array's elements in order.
type Array struct {
	Header
	file, name string
	r          io.ReadCloser
	pos        int // elements read
	buf        []byte
}

// Close closes the array.
func (a *Array) Close() error { return a.r.Close() }

// Pos is the number of elements read so far.
func (a *Array) Pos() int { return a.pos }

// chunk is the most bytes read at a time.
const chunk = 1 << 16

// ReadFloat64 reads the next len(dst) elements into dst, converted to
// float64 (exact for every type but 64-bit integers beyond 2^53).
func (a *Array) ReadFloat64(dst []float64) error {
	return a.read(len(dst), func(i int, b []byte) { dst[i] = a.float64(b) })
}

// ReadFloat32 reads the next len(dst) elements into dst, converted to
// float32.
func (a *Array) ReadFloat32(dst []float32) error {
	if a.DType.Kind == 'f' && a.DType.Size == 4 {
		return a.read(len(dst), func(i int, b []byte) { dst[i] = math.Float32frombits(a.DType.Order.Uint32(b)) })
	}
	return a.read(len(dst), func(i int, b []byte) { dst[i] = float32(a.float64(b)) })
}

// ReadBytes reads the next len(dst) elements of a uint8 array.
func (a *Array) ReadBytes(dst []byte) error {
	if a.DType.Kind != 'u' || a.DType.Size != 1 {
		return fmt.Errorf("%w: %s: array %s is %s, not uint8", data.ErrInvalid, a.file, a.name, a.DType)
	}
	return a.read(len(dst), func(i int, b []byte) { dst[i] = b[0] })
}

func (a *Array) float64(b []byte) float64 {
	o := a.DType.Order
	switch a.DType.Kind {
	case 'b':
		if b[0] != 0 {
			return 1
		}
		return 0
	case 'f':
		switch a.DType.Size {
		case 2:
			return Half(o.Uint16(b))
		case 4:
			return float64(math.Float32frombits(o.Uint32(b)))
		}
		return math.Float64frombits(o.Uint64(b))
	case 'u':
		switch a.DType.Size {
		case 1:
			return float64(b[0])
		case 2:
			return float64(o.Uint16(b))
		case 4:
			return float64(o.Uint32(b))
		}
		return float64(o.Uint64(b))
	}
	switch a.DType.Size {
	case 1:
		return float64(int8(b[0]))
	case 2:
		return float64(int16(o.Uint16(b)))
	case 4:
		return float64(int32(o.Uint32(b)))
	}
	return float64(int64(o.Uint64(b)))
}

// Half is the value of an IEEE 754 half-precision number (NumPy's
// float16), exactly.
func Half(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0: // zero or subnormal
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// ToC reorders the elements of an array of the given shape from Fortran
// order (src, the first index varying fastest) into C order (dst, the
// last index varying fastest): the transpose of its storage.
func ToC[T any](dst, src []T, shape []int) {
	if len(shape) < 2 {
		copy(dst, src)
		return
	}
	// strides[k] is index k's step in src.
	strides := make([]int, len(shape))
	step := 1
	for k, d := range shape {
		strides[k] = step
		step *= d
	}
	idx := make([]int, len(shape))
	last := len(shape) - 1
	off := 0
	for i := range dst {
		dst[i] = src[off]
		// Advance the C-order index, the last dimension fastest.
		for k := last; k >= 0; k-- {
			idx[k]++
			off += strides[k]
			if idx[k] < shape[k] {
				break
			}
			off -= idx[k] * strides[k]
			idx[k] = 0
		}
	}
}

// read reads n elements in chunks, calling put with each element's
// index among the n and its bytes.
func (a *Array) read(n int, put func(i int, b []byte)) error {
	if n > a.Len-a.pos {
		return fmt.Errorf("%w: %s: array %s: reading %d elements at %d of %d", data.ErrInvalid, a.file, a.name, n, a.pos, a.Len)
	}
	size := a.DType.Size
	if a.buf == nil {
		a.buf = make([]byte, chunk)
	}
	for i := 0; i < n; {
		m := min(n-i, chunk/size)
		b := a.buf[:m*size]
		if _, err := io.ReadFull(a.r, b); err != nil {
			return fmt.Errorf("%w: %s: array %s: reading element %d: %w", data.ErrInvalid, a.file, a.name, a.pos+i, eof(err))
		}
		for k := range m {
			put(i+k, b[k*size:(k+1)*size])
		}
		i += m
	}
	a.pos += n
	return nil
}

// Writer writes an .npz archive, one array at a time. Arrays are stored
// uncompressed, as numpy.savez does.
type Writer struct {
	z     *zip.Writer
	names map[string]bool
}

// NewWriter returns a writer to w; Close finishes the archive but does
// not close w.
func NewWriter(w io.Writer) *Writer { return &Writer{z: zip.NewWriter(w), names: map[string]bool{}} }

// Create starts the array name of the given descr (e.g. "<f8") and
// shape and returns the writer of its data: exactly the shape's
// elements, little-endian, in C order. The data must be written before
// the next Create. A name used before, empty, not UTF-8 or holding a
// control character (a NUL ends it for some zip readers) is refused.
func (w *Writer) Create(name, descr string, shape []int) (io.Writer, error) {
	if _, err := ParseDType(descr); err != nil {
		panic("npz: " + err.Error())
	}
	switch {
	case name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return nil, fmt.Errorf("npz: array name %q: empty, not UTF-8 or holding a control character", name)
	case w.names[name]:
		return nil, fmt.Errorf("npz: array %q written twice", name)
	}
	w.names[name] = true
	e, err := w.z.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
	if err != nil {
		return nil, err
	}
	if _, err := e.Write(EncodeHeader(descr, shape)); err != nil {
		return nil, err
	}
	return e, nil
}

// EncodeHeader is the .npy version 1.0 header of an array, padded as
// numpy pads it (to a multiple of 64 bytes, ending in a newline).
func EncodeHeader(descr string, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	h := append([]byte{}, Magic...)
	h = append(h, 1, 0, 0, 0)
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)+pad+1))
	h = append(h, dict...)
	h = append(h, bytes.Repeat([]byte{' '}, pad)...)
	return append(h, '\n')
}

// WriteFloat64 writes v, of the given shape, as a float64 array.
func (w *Writer) WriteFloat64(name string, shape []int, v []float64) error {
	out, err := w.Create(name, "<f8", shape)
	if err != nil {
		return err
	}
	return binary.Write(out, binary.LittleEndian, v)
}

// Close writes the archive's directory.
func (w *Writer) Close() error { return w.z.Close() }

// WriteStrings writes v as a NumPy Unicode array (<Un, n the most
// characters of any string; UTF-32, each string padded with zeros), of
// shape len(v), as numpy.array(list_of_str) gives. A string that is not
// valid UTF-8 is written with U+FFFD for each bad byte.
func (w *Writer) WriteStrings(name string, v []string) error {
	width := 1
	for _, s := range v {
		width = max(width, utf8.RuneCountInString(s))
	}
	descr := "<U" + strconv.Itoa(width)
	switch {
	case name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("npz: array name %q: empty, not UTF-8 or holding a control character", name)
	case w.names[name]:
		return fmt.Errorf("npz: array %q written twice", name)
	}
	w.names[name] = true
	e, err := w.z.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Store})
	if err != nil {
		return err
	}
	if _, err := e.Write(EncodeHeader(descr, []int{len(v)})); err != nil {
		return err
	}
	buf := make([]byte, 4*width)
	for _, s := range v {
		clear(buf)
		k := 0
		for _, r := range s {
			binary.LittleEndian.PutUint32(buf[4*k:], uint32(r))
			k++
		}
		if _, err := e.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
