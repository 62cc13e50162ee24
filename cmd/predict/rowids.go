package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/data/npz"
)

// writeNPZIDs writes the rows' identifiers, where the inputs have them,
// as pred.npz's array "id" (NumPy Unicode strings). They are read back
// whole: an array's header needs the longest.
func (w *writer) writeNPZIDs(z *npz.Writer) error {
	if w.ids == nil {
		return nil
	}
	r := bufio.NewReaderSize(w.ids.f, 1<<16)
	ids := make([]string, w.n)
	for e := range ids {
		id, err := readID(r)
		if err != nil {
			return fmt.Errorf("reading back the identifiers: %w", err)
		}
		ids[e] = id
	}
	return z.WriteStrings("id", ids)
}

// skippedPath is where the rows left out of out's predictions are
// listed: beside it, its extension replaced by .skipped.csv.
func skippedPath(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + ".skipped.csv"
}

// writeSkipped lists the rows of the inputs left out for a missing input
// (a run trained with -missing drop): each one's line in the file and
// its id (the column idName; empty without one).
func writeSkipped(out io.Writer, rows []files.Skipped, idName string) error {
	bw := bufio.NewWriter(out)
	if idName == "" {
		idName = "id"
	}
	fmt.Fprintf(bw, "line,%s\n", csvField(idName))
	for _, r := range rows {
		fmt.Fprintf(bw, "%d,%s\n", r.Line, csvField(r.ID))
	}
	return bw.Flush()
}
