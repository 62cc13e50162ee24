package files

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/regfile"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// The bounds on a CSV file's lines. encoding/csv holds a whole line, and
// its memory grows with about four times the longest, so a file with no
// newline (a binary file, a sparse one) would be read until memory runs
// out: the header may be at most maxCSVHeader bytes long, and a line
// after it csvLineBase bytes and csvColumnBytes per column of the
// header (a float32 in its shortest form takes at most 15, so this
// leaves room for spaces, quotes and category names).
const (
	maxCSVHeader   = 16 << 20
	csvLineBase    = 1024
	csvColumnBytes = 128
)

// MaxCategories bounds the distinct values of a categorical input column
// and of a task's string labels: more is an identifier or free text,
// whose one-hot encoding would only memorise rows.
const MaxCategories = 1000

// bom is the UTF-8 byte-order mark that Excel's "CSV UTF-8" and Notepad
// put first: not part of the first column's name.
var bom = []byte("\xEF\xBB\xBF")

// number reads a trimmed CSV cell as a number: a decimal or float
// literal, or a boolean as pandas (True, False) and R (TRUE, FALSE)
// write them, 1 or 0. A value too large for a float64 is ±Inf.
func number(s string) (float64, bool) {
	switch s {
	case "True", "TRUE", "true":
		return 1, true
	case "False", "FALSE", "false":
		return 0, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

// decimalComma matches a number written with a decimal comma (1,5):
// under a ";" separator, what a spreadsheet in many locales writes.
var decimalComma = regexp.MustCompile(`^[-+]?[0-9]*,[0-9]+$`)

// lineLimit passes a reader through, failing once a line runs past
// limit bytes.
type lineLimit struct {
	r     io.Reader
	limit int // bytes of the current line at most
	run   int // bytes of the current line so far
	line  int // lines started, from 1
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.run += len(rest)
			break
		}
		if l.run += i; l.run > l.limit {
			break
		}
		l.run, l.line, rest = 0, l.line+1, rest[i+1:]
	}
	if l.run > l.limit {
		return 0, fmt.Errorf("line %d: longer than %d bytes (a line holds one example; is this a CSV file?)", l.line, l.limit)
	}
	return n, err
}

// columns bounds the lines after a header of n columns.
func (l *lineLimit) columns(n int) {
	l.limit = csvLineBase + csvColumnBytes*n
}

// sepPeek is how much of a file the separator is detected from: the
// header's first 64 KiB.
const sepPeek = 64 << 10

// csvReader is a CSV reader of r, its byte-order mark skipped, its
// header no longer than maxCSVHeader, and its separator sep or, if sep
// is 0, the one of ",", ";" and tab that the header line holds most of
// outside quotes (a comma where there is none: one column).
func csvReader(r io.Reader, sep rune) (*csv.Reader, *lineLimit) {
	br := bufio.NewReaderSize(r, sepPeek)
	if b, err := br.Peek(len(bom)); err == nil && bytes.Equal(b, bom) {
		br.Discard(len(bom))
	}
	if sep == 0 {
		head, _ := br.Peek(sepPeek)
		sep = detectSep(head)
	}
	lim := &lineLimit{r: br, limit: maxCSVHeader, line: 1}
	cr := csv.NewReader(lim)
	cr.Comma = sep
	cr.ReuseRecord = true
	return cr, lim
}

// detectSep is the separator of a CSV header line (the text up to its
// first newline outside quotes).
func detectSep(head []byte) rune {
	var n [3]int
	seps := [3]byte{',', ';', '\t'}
	quoted := false
	for _, c := range head {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if c == '\n' {
			break
		}
		for k, s := range seps {
			if c == s {
				n[k]++
			}
		}
	}
	best := 0
	for k := range n {
		if n[k] > n[best] {
			best = k
		}
	}
	return rune(seps[best])
}

// ParseSep reads a -sep option: "" (found from each file's header), ",",
// ";", or a tab as "\t" or "tab".
func ParseSep(s string) (rune, error) {
	switch s {
	case "":
		return 0, nil
	case ",", ";", "|":
		return rune(s[0]), nil
	case "\t", `\t`, "tab":
		return '\t', nil
	}
	return 0, fmt.Errorf("separator %q is not \",\", \";\", \"|\" or \"tab\"", s)
}

// csvError is an error about a file's content, naming the file.
func csvError(path, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", data.ErrInvalid, path, fmt.Sprintf(format, args...))
}

// listShort lists names for a message, the first ten.
func listShort(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i == 10 {
			fmt.Fprintf(&b, ", … %d in all", len(names))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(short(n))
	}
	return b.String()
}

// listPlain is listShort for values that need no quotes (numbers).
func listPlain(vals []string) string {
	if len(vals) > 10 {
		return strings.Join(vals[:10], ", ") + fmt.Sprintf(", … %d in all", len(vals))
	}
	return strings.Join(vals, ", ")
}

// checkMemory refuses a CSV file whose text, at 4 bytes of memory per 2
// of text, would need more than half the machine's memory.
func checkMemory(path string, size int64) error {
	if total, source := sysmem.Total(); 2*float64(size) > total/2 {
		return csvError(path, "%s of text may hold %s of numbers, more than half the memory (%s, %s); split it, or use an .npz archive",
			sysmem.Format(float64(size)), sysmem.Format(2*float64(size)), sysmem.Format(total), source)
	}
	return nil
}

// openCSV opens a CSV file and reads its header; whole, the file is
// read into memory, whose bound it must fit (predict's inputs are read a
// chunk at a time).
func openCSV(path string, sep rune, whole bool) (*os.File, *csv.Reader, []string, error) {
	f, st, err := regfile.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkMemory(path, st.Size()); whole && err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	if err := checkUTF8(f, path); err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	r, lim := csvReader(f, sep)
	header, err := r.Read()
	if err != nil {
		f.Close()
		return nil, nil, nil, csvError(path, "reading the header: %v", err)
	}
	header = slices.Clone(header)
	lim.columns(len(header))
	return f, r, header, nil
}

// checkUTF8 refuses a CSV file in UTF-16 (what R's fileEncoding =
// "UTF-16LE" or Excel's "Unicode text" writes), by its byte-order mark or
// the NUL byte beside each ASCII character, which the CSV reader would
// report as a quoting error.
func checkUTF8(f *os.File, path string) error {
	var b [2]byte
	if n, _ := f.ReadAt(b[:], 0); n < 2 {
		return nil
	}
	what := ""
	switch {
	case b == [2]byte{0xFF, 0xFE}:
		what = "UTF-16 little-endian: its byte-order mark is FF FE"
	case b == [2]byte{0xFE, 0xFF}:
		what = "UTF-16 big-endian: its byte-order mark is FE FF"
	case (b[0] == 0) != (b[1] == 0):
		what = "UTF-16, by the NUL byte beside its first character"
	default:
		return nil
	}
	return csvError(path, "not UTF-8 (%s): save it as UTF-8 (R: write.csv(..., fileEncoding = \"UTF-8\"); pandas: to_csv(..., encoding = \"utf-8\"))", what)
}
