package files

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// real is testdata/real: cuts of airquality, survey and penguins as R's
// write.csv and pandas' to_csv write them (README.md there).
const real = "testdata/real"

// Each real table loads under the default of train (-missing impute)
// with every row kept, its row names as the ids, and the same numbers
// from R's export as from pandas': R writes NA and quotes, pandas an
// empty cell and floats ("41.0").
func TestRealExports(t *testing.T) {
	for _, tc := range []struct {
		name       string
		indicators []string
		category   string // a categorical column holding "None" or MissingCategory
		want       string
	}{
		{"airquality", []string{"Solar.R"}, "", ""},
		{"survey", []string{"Pulse"}, "Exer", "None"},
		{"penguins", []string{"bill_depth_mm", "bill_length_mm", "flipper_length_mm"}, "sex", MissingCategory},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sets []*Data
			for _, tool := range []string{"r", "pandas"} {
				dir := filepath.Join(real, tc.name+"-"+tool)
				d, err := Load(dir, Options{Missing: MissingImpute})
				if err != nil {
					t.Fatal(err)
				}
				rows := readRows(t, filepath.Join(dir, "train.csv"))
				if d.Train.Len() != len(rows) {
					t.Errorf("%s: %d training rows of %d", tool, d.Train.Len(), len(rows))
				}
				var index []string
				for _, r := range rows {
					index = append(index, r[0])
				}
				if !slices.Equal(d.Train.IDs(), index) {
					t.Errorf("%s: ids %v, the row names %v", tool, d.Train.IDs(), index)
				}
				for _, c := range tc.indicators {
					if !slices.Contains(d.Spec.Indicators, c) {
						t.Errorf("%s: no missing indicator for %s (%v)", tool, c, d.Spec.Indicators)
					}
				}
				if tc.category != "" && !slices.Contains(d.Spec.Categories[tc.category], tc.want) {
					t.Errorf("%s: %s's categories %q lack %q", tool, tc.category, d.Spec.Categories[tc.category], tc.want)
				}
				sets = append(sets, d)
			}
			r, p := sets[0], sets[1]
			if !slices.Equal(r.Spec.Indicators, p.Spec.Indicators) || !mapsEqual(r.Spec.Medians, p.Spec.Medians) {
				t.Errorf("R: %v %v; pandas: %v %v", r.Spec.Indicators, r.Spec.Medians, p.Spec.Indicators, p.Spec.Medians)
			}
			for i := range r.Train.Len() {
				xr, yr := row(r.Train, i)
				xp, yp := row(p.Train, i)
				if !near(xr, xp, 0) || !slices.EqualFunc(yr, yp, func(a, b float32) bool { return a == b || (a != a && b != b) }) {
					t.Fatalf("row %d: R %v %v, pandas %v %v", i, xr, yr, xp, yp)
				}
			}
			for _, x := range r.Train.floats {
				if math.IsNaN(float64(x)) {
					t.Fatal("a missing input left unfilled")
				}
			}
		})
	}
}

// readRows reads a CSV file's records after its header.
func readRows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:]
}
