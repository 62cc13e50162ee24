package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// On real tables with holes as R and pandas export them (survey: NA and
// empty inputs and labels), a run that imputes predicts every row of the
// test file, pred.csv and pred.npz carrying each row's name; a run that
// drops such rows predicts the others and lists the rest, by line and
// name, in pred.skipped.csv.
func TestPredictEveryRow(t *testing.T) {
	for _, tc := range []struct {
		dir, missing string
	}{
		{"survey-r", files.MissingImpute},
		{"survey-pandas", files.MissingImpute},
		{"survey-r", files.MissingDrop},
	} {
		t.Run(tc.dir+"-"+tc.missing, func(t *testing.T) {
			dir := t.TempDir()
			testenv.CopyDir(t, filepath.Join("..", "..", "data", "files", "testdata", "real", tc.dir), dir)
			runDir := trainFiles(t, dir, func(s *experiment.Settings) {
				s.Files.Missing, s.Epochs = tc.missing, 1
			})
			out := t.TempDir()
			pred, npzPath := filepath.Join(out, "pred.csv"), filepath.Join(out, "pred.npz")
			o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, "test.csv"), "-out", pred, "-out", npzPath, "-progress=false"}, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if err := run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			in := readCSVFile(t, filepath.Join(dir, "test.csv"))
			var kept, skipped [][]string // line, row name
			for e, r := range in[1:] {
				row := []string{strconv.Itoa(e + 2), r[0]}
				if tc.missing == files.MissingDrop && slices.ContainsFunc(r[1:], func(c string) bool { return c == "NA" || c == "" }) && !onlyLabelsMissing(in[0], r) {
					skipped = append(skipped, row)
					continue
				}
				kept = append(kept, row)
			}
			got := readCSVFile(t, pred)
			if got[0][1] != "id" || len(got)-1 != len(kept) {
				t.Fatalf("header %q, %d rows; want id second, %d rows", got[0], len(got)-1, len(kept))
			}
			ids := npzStrings(t, npzPath, "id")
			for e, r := range kept {
				if got[e+1][1] != r[1] || ids[e] != r[1] {
					t.Errorf("row %d: id %q (npz %q), the input's %q", e, got[e+1][1], ids[e], r[1])
				}
			}
			if tc.missing != files.MissingDrop {
				return
			}
			list := readCSVFile(t, filepath.Join(out, "pred.skipped.csv"))
			if !slices.Equal(list[0], []string{"line", "id"}) || !slices.EqualFunc(list[1:], skipped, slices.Equal) || len(skipped) == 0 {
				t.Errorf("pred.skipped.csv %q, want the rows %q", list, skipped)
			}
		})
	}
}

// onlyLabelsMissing reports whether a survey row's missing cells are all
// in its task columns (Sex, Height), which predict does not read.
func onlyLabelsMissing(head, r []string) bool {
	for c := 1; c < len(r); c++ {
		if (r[c] == "NA" || r[c] == "") && head[c] != "Sex" && head[c] != "Height" {
			return false
		}
	}
	return true
}

// npzStrings reads a NumPy Unicode array (<Un) from an .npz file.
func npzStrings(t *testing.T, path, name string) []string {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	f, err := z.Open(name + ".npy")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	hlen := int(binary.LittleEndian.Uint16(b[8:10]))
	header, body := string(b[10:10+hlen]), b[10+hlen:]
	i := strings.Index(header, "'<U")
	if i < 0 {
		t.Fatalf("%s: header %q is not a Unicode array's", name, header)
	}
	width := 0
	for _, c := range header[i+3:] {
		if c < '0' || c > '9' {
			break
		}
		width = 10*width + int(c-'0')
	}
	var out []string
	for len(body) >= 4*width {
		var s []rune
		for k := range width {
			if r := rune(binary.LittleEndian.Uint32(body[4*k:])); r != 0 {
				s = append(s, r)
			}
		}
		out, body = append(out, string(s)), body[4*width:]
	}
	return out
}

// A positive task (airquality's ozone, declared so) is predicted in its
// units and never below 0, even by a network trained for one epoch.
func TestPredictPositive(t *testing.T) {
	dir := t.TempDir()
	testenv.CopyDir(t, filepath.Join("..", "..", "data", "files", "testdata", "real", "airquality-r"), dir)
	if err := os.WriteFile(filepath.Join(dir, files.TasksFile), []byte(`{"tasks": [{"name": "Ozone", "kind": "regression", "positive": true}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := trainFiles(t, dir, func(s *experiment.Settings) { s.Files.Missing, s.Epochs = files.MissingImpute, 1 })
	pred := filepath.Join(t.TempDir(), "pred.npz")
	o, err := parseFlags([]string{"-ckpt", runDir, "-data", filepath.Join(dir, "test.csv"), "-out", pred, "-progress=false"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	mean, _ := readNPZ(t, pred, "Ozone/mean")
	for e, m := range mean {
		// The fixture's ozone runs from 1 to 115 (ppb).
		if !(m > 0) || m > 1000 {
			t.Errorf("row %d: predicted ozone %v, not above 0 in ppb", e, m)
		}
	}
}
