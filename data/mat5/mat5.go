// Package mat5 reads real numeric matrices from MATLAB level-5 MAT-files
// (the format of MATLAB 5 to 7.2, and of scipy.io.savemat), compressed or
// not. It reads what numeric data sets need and refuses the rest (cell
// arrays, structs, objects, characters, sparse and complex arrays, arrays
// of more than two dimensions) with an error saying what it found.
//
// No well-kept Go library reads this format: the candidates found were
// unmaintained for years, or young, with a v5 parser that had been broken
// in releases of their own. This reader follows MathWorks' "MAT-File Format"
// (version 7.x documentation, chapter 1) and is tested against files
// written by scipy.io.savemat.
//
// The layout: a 128-byte header (116 bytes of text, 8 bytes of subsystem
// offset, the version 0x0100 and an endian indicator "IM" that reads "MI"
// when the file's byte order differs), then data elements. An element is
// an 8-byte tag (type, byte count) and its data padded to 8 bytes, or, when
// the count fits in the tag's upper half, a 4-byte tag with up to 4 bytes
// of data. A miCOMPRESSED element holds one zlib-compressed element. A
// miMATRIX element holds sub-elements: array flags (class), dimensions,
// name, and the real part in any numeric storage type, column-major.
package mat5

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// Matrix is a real two-dimensional array.
type Matrix struct {
	Name       string
	Rows, Cols int
	// Data holds the values row by row (converted from MATLAB's
	// column-major order), as float64 whatever their stored type.
	Data []float64
}

// At returns the value at row i, column j.
func (m *Matrix) At(i, j int) float64 { return m.Data[i*m.Cols+j] }

// Data element types (miXXX) and array classes (mxXXX_CLASS).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15

	flagComplex = 0x0800
)

var classNames = map[uint32]string{
	1: "a cell array", 2: "a struct", 3: "an object", 4: "a character array", 5: "a sparse array",
	6: "double", 7: "single", 8: "int8", 9: "uint8", 10: "int16", 11: "uint16",
	12: "int32", 13: "uint32", 14: "int64", 15: "uint64",
}

// maxElement bounds one element's size, and so what a corrupt byte count
// or a compressed element can make the reader allocate.
const maxElement = 1 << 31

// ReadFile reads every variable of the MAT-file at path, which must be a
// regular file (package regfile: a device or a pipe is refused without
// blocking). No element is read, or decompressed, past the size its tag
// promises, nor one promising more than a quarter of the machine's memory.
func ReadFile(path string) ([]Matrix, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ms, err := Read(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, nil
}

// Read reads every variable of a MAT-file.
func Read(r io.Reader) ([]Matrix, error) {
	var head [128]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("not a MAT-file: %d-byte header expected: %w", len(head), err)
	}
	var order binary.ByteOrder
	switch string(head[126:128]) {
	case "IM":
		order = binary.LittleEndian
	case "MI":
		order = binary.BigEndian
	default:
		if bytes.HasPrefix(head[:], []byte{0x89, 'H', 'D', 'F'}) || bytes.Contains(head[:116], []byte("7.3 MAT")) {
			return nil, errors.New("a MATLAB 7.3 (HDF5) MAT-file: save it with -v7 or scipy.io.savemat")
		}
		return nil, fmt.Errorf("not a level-5 MAT-file: endian indicator %q, want \"IM\" or \"MI\"", head[126:128])
	}
	if v := order.Uint16(head[124:126]); v != 0x0100 {
		return nil, fmt.Errorf("MAT-file version 0x%04x, want 0x0100", v)
	}
	var out []Matrix
	for {
		typ, data, err := readElement(r, order)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("variable %d: %w", len(out)+1, err)
		}
		if typ == miCOMPRESSED {
			if typ, data, err = inflate(data, order); err != nil {
				return nil, fmt.Errorf("variable %d: %w", len(out)+1, err)
			}
		}
		if typ != miMATRIX {
			return nil, fmt.Errorf("variable %d: data element of type %d, want a matrix (14)", len(out)+1, typ)
		}
		m, err := parseMatrix(data, order)
		if err != nil {
			if m.Name != "" {
				return nil, fmt.Errorf("variable %q: %w", m.Name, err)
			}
			return nil, fmt.Errorf("variable %d: %w", len(out)+1, err)
		}
		out = append(out, m)
	}
}

// readElement reads one top-level element: its type and its data. It
// returns io.EOF at a clean end of the file.
func readElement(r io.Reader, order binary.ByteOrder) (uint32, []byte, error) {
	var tag [8]byte
	n, err := io.ReadFull(r, tag[:])
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		return 0, nil, fmt.Errorf("truncated element tag (%d of 8 bytes)", n)
	}
	typ, size := order.Uint32(tag[:4]), order.Uint32(tag[4:])
	if n := typ >> 16; n != 0 { // small element: the data is in the tag
		if n > 4 {
			return 0, nil, fmt.Errorf("small data element claims %d bytes, at most 4 fit", n)
		}
		return typ & 0xffff, tag[4 : 4+n], nil
	}
	if size > maxElement {
		return 0, nil, fmt.Errorf("element of %d bytes is too large", size)
	}
	if total, source := sysmem.Total(); float64(size) > total/4 {
		return 0, nil, fmt.Errorf("element of %s is more than a quarter of this machine's memory (%s, %s)",
			sysmem.Format(float64(size)), sysmem.Format(total), source)
	}
	// Read through a limit rather than allocating what a corrupt count
	// says: a short file ends the copy.
	var data bytes.Buffer
	if got, _ := io.Copy(&data, io.LimitReader(r, int64(size))); got != int64(size) {
		return 0, nil, fmt.Errorf("truncated: element of type %d says %d bytes, the file has %d", typ, size, got)
	}
	if typ != miCOMPRESSED { // compressed elements are not padded
		if pad := (8 - size%8) % 8; pad > 0 {
			if _, err := io.CopyN(io.Discard, r, int64(pad)); err != nil && err != io.EOF {
				return 0, nil, err
			}
		}
	}
	return typ, data.Bytes(), nil
}

// inflate decompresses a miCOMPRESSED element's data, which holds one
// complete element.
func inflate(data []byte, order binary.ByteOrder) (uint32, []byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return 0, nil, fmt.Errorf("compressed element: %w", err)
	}
	typ, inner, err := readElement(io.LimitReader(zr, maxElement), order)
	if err == io.EOF {
		return 0, nil, errors.New("compressed element is empty")
	}
	if err != nil {
		return 0, nil, fmt.Errorf("compressed element: %w", err)
	}
	return typ, inner, nil
}

// parseMatrix decodes a miMATRIX element's sub-elements.
func parseMatrix(data []byte, order binary.ByteOrder) (Matrix, error) {
	var m Matrix
	r := bytes.NewReader(data)
	next := func(what string) (uint32, []byte, error) {
		typ, b, err := readElement(r, order)
		if err == io.EOF {
			return 0, nil, fmt.Errorf("matrix ends before its %s", what)
		}
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %w", what, err)
		}
		return typ, b, nil
	}
	typ, flags, err := next("array flags")
	if err != nil {
		return m, err
	}
	if typ != miUINT32 || len(flags) != 8 {
		return m, fmt.Errorf("array flags of type %d and %d bytes, want uint32 and 8", typ, len(flags))
	}
	f := order.Uint32(flags)
	class := f & 0xff
	typ, dimBytes, err := next("dimensions")
	if err != nil {
		return m, err
	}
	if typ != miINT32 || len(dimBytes)%4 != 0 {
		return m, fmt.Errorf("dimensions of type %d, want int32", typ)
	}
	var dims []int
	for i := 0; i < len(dimBytes); i += 4 {
		d := int32(order.Uint32(dimBytes[i:]))
		if d < 0 {
			return m, fmt.Errorf("negative dimension %d", d)
		}
		dims = append(dims, int(d))
	}
	typ, name, err := next("name")
	if err != nil {
		return m, err
	}
	if typ != miINT8 {
		return m, fmt.Errorf("name of type %d, want int8", typ)
	}
	m.Name = string(name)
	what, known := classNames[class]
	switch {
	case !known:
		return m, fmt.Errorf("unknown array class %d", class)
	case class < 6:
		return m, fmt.Errorf("%s; only real numeric matrices are supported", what)
	case f&flagComplex != 0:
		return m, fmt.Errorf("a complex %s array; only real numeric matrices are supported", what)
	case len(dims) != 2:
		return m, fmt.Errorf("an array of %d dimensions %v; only matrices (2) are supported", len(dims), dims)
	}
	m.Rows, m.Cols = dims[0], dims[1]
	if m.Rows > 0 && m.Cols > maxElement/m.Rows {
		return m, fmt.Errorf("dimensions %d×%d too large", m.Rows, m.Cols)
	}
	typ, real, err := next("values")
	if err != nil {
		return m, err
	}
	colMajor, err := decode(typ, real, order)
	if err != nil {
		return m, err
	}
	if len(colMajor) != m.Rows*m.Cols {
		return m, fmt.Errorf("%d values for a %d×%d matrix", len(colMajor), m.Rows, m.Cols)
	}
	m.Data = make([]float64, len(colMajor))
	for j := range m.Cols {
		for i := range m.Rows {
			m.Data[i*m.Cols+j] = colMajor[j*m.Rows+i]
		}
	}
	return m, nil
}

// decode converts numeric data of storage type typ to float64. MATLAB may
// store a double array in a smaller type when its values fit.
func decode(typ uint32, b []byte, order binary.ByteOrder) ([]float64, error) {
	size := map[uint32]int{miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
		miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8}[typ]
	if size == 0 {
		return nil, fmt.Errorf("values of data type %d, not a numeric type", typ)
	}
	if len(b)%size != 0 {
		return nil, fmt.Errorf("%d bytes of values, not a whole number of %d-byte values", len(b), size)
	}
	out := make([]float64, len(b)/size)
	for i := range out {
		v := b[i*size:]
		switch typ {
		case miINT8:
			out[i] = float64(int8(v[0]))
		case miUINT8:
			out[i] = float64(v[0])
		case miINT16:
			out[i] = float64(int16(order.Uint16(v)))
		case miUINT16:
			out[i] = float64(order.Uint16(v))
		case miINT32:
			out[i] = float64(int32(order.Uint32(v)))
		case miUINT32:
			out[i] = float64(order.Uint32(v))
		case miSINGLE:
			out[i] = float64(math.Float32frombits(order.Uint32(v)))
		case miDOUBLE:
			out[i] = math.Float64frombits(order.Uint64(v))
		case miINT64:
			out[i] = float64(int64(order.Uint64(v)))
		case miUINT64:
			out[i] = float64(order.Uint64(v))
		}
	}
	return out, nil
}
