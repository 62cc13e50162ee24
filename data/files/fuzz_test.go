package files

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mtsgd/mtsgd/data"
)

// Random CSV text as a training split with the tables users export
// (string class labels, a categorical input, an id column, an ignored
// column, -missing drop or error) never panics the loader: it loads, and
// every example reads, or it is refused as bad data.
func FuzzCSVTable(f *testing.F) {
	f.Add(",id,x,colour,note,species,value\n0,a,1.5,red,z,ant,4200\n1,b,,blue,z,NA,NA\n2,c,2,red,,bee,3900\n", false)
	f.Add("id;x;colour;note;species;value\na;1;red;q;ant;1\nb;2;green;q;bee;\n", true)
	f.Add("\ufeff\"\",\"id\",\"x\",\"colour\",\"note\",\"species\",\"value\"\n\"1\",\"s\",NA,\"red\",\"\",\"cat\",TRUE\n", true)
	desc := Description{
		Tasks:       []TaskSpec{{Name: "species", Kind: "classification"}, {Name: "value", Kind: "regression"}},
		ID:          "id",
		Ignore:      []string{"note"},
		Categorical: []string{"colour"},
	}
	f.Fuzz(func(t *testing.T, content string, drop bool) {
		dir := t.TempDir()
		if err := WriteDescription(dir, desc); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, TrainFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{Valid: AutoValid, Seed: 1}
		if drop {
			o.Missing = MissingDrop
		}
		d, err := Load(dir, o)
		if err != nil {
			if !errors.Is(err, data.ErrInvalid) && !errors.As(err, new(*data.SettingError)) {
				t.Fatalf("error %v is not bad data", err)
			}
			return
		}
		readAll(t, d.Train)
	})
}

// Random CSV text as inputs to predict on, against the spec of a run
// trained on pandas' export (categories, an id column, string labels),
// never panics: each chunk reads, or the file is refused as bad data.
func FuzzCSVPredict(f *testing.F) {
	f.Add(",id,x1,x2,colour,flag\n0,a,1,2,red,True\n1,b,0.5,-2,blue,False\n")
	f.Add("id,x1,x2,colour,flag\na,1,,red,True\n")
	f.Add("x2;x1;colour;flag\n1;2;green;False\n")
	d, err := Load(filepath.Join(formats, "pandas-index"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	spec := d.Spec
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(t.TempDir(), "new.csv")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := OpenInputs(path, &spec)
		if err != nil {
			if !errors.Is(err, data.ErrInvalid) {
				t.Fatalf("error %v is not bad data", err)
			}
			return
		}
		defer in.Close()
		for {
			s, err := in.Next(3)
			if err != nil {
				if !errors.Is(err, data.ErrInvalid) {
					t.Fatalf("error %v is not bad data", err)
				}
				return
			}
			if s == nil {
				return
			}
			readAll(t, s)
			if ids := s.IDs(); ids != nil && len(ids) != s.Len() {
				t.Fatalf("%d ids for %d rows", len(ids), s.Len())
			}
		}
	})
}

// readAll reads every example of d, failing on any error.
func readAll(t *testing.T, d data.Dataset) {
	t.Helper()
	x, y := make([]float32, data.InputSize(d)), make([]float32, len(d.Tasks()))
	for i := range d.Len() {
		if err := d.Example(i, x, y); err != nil {
			t.Fatalf("example %d: %v", i, err)
		}
	}
}
