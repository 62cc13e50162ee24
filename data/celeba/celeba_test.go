package celeba

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// fixture writes n images in the official layout (testenv.CelebAFixture).
func fixture(t *testing.T, n int, edit func(attr, part []string) ([]string, []string)) string {
	t.Helper()
	return testenv.CelebAFixture(t, n, edit)
}

func TestLoad(t *testing.T) {
	root := fixture(t, 30, nil)
	sp, err := Load(root, Options{Tasks: "10", Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Train.Len() != 18 || sp.Valid.Len() != 6 || sp.Test.Len() != 6 {
		t.Fatalf("splits of %d, %d, %d", sp.Train.Len(), sp.Valid.Len(), sp.Test.Len())
	}
	tasks := sp.Train.Tasks()
	if len(tasks) != 10 || tasks[0].Name != "5_o_Clock_Shadow" || tasks[9].Name != "Blond_Hair" || tasks[0].Classes != 2 {
		t.Fatalf("tasks %v", tasks)
	}
	x, y := make([]float32, data.InputSize(sp.Train)), make([]float32, 10)
	// Splits cycle train, train, train, valid, test, so the training
	// examples are images 0, 1, 2, 5, 6, … and example 3 is image 5.
	if err := sp.Train.Example(3, x, y); err != nil {
		t.Fatal(err)
	}
	const i = 5
	for a := range 10 {
		if want := float32((i + a + 1) % 2); y[a] != want {
			t.Fatalf("attribute %d = %v, want %v", a, y[a], want)
		}
	}
	// Channels first, [0,1]: a solid colour stays that colour up to JPEG's
	// error (a few levels).
	want := []float64{float64(10*i%256) / 255, 200.0 / 255, float64(255-10*i%256) / 255}
	for c := range 3 {
		for _, p := range []int{0, Side*Side/2 + Side/2, Side*Side - 1} {
			if got := float64(x[c*Side*Side+p]); math.Abs(got-want[c]) > 6.0/255 {
				t.Errorf("channel %d pixel %d = %.3f, want %.3f", c, p, got, want[c])
			}
		}
	}

	named, err := Load(root, Options{Tasks: "Male, Smiling", TrainLimit: 4, TestLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if named.Train.Len() != 4 || named.Test.Len() != 2 || named.Train.Tasks()[1].Name != "Smiling" {
		t.Errorf("named tasks with limits: %d %d %v", named.Train.Len(), named.Test.Len(), named.Train.Tasks())
	}
}

// Each malformed input gives its own error naming the file.
func TestMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(attr, part []string) ([]string, []string)
		hurt func(root string)
		want string
	}{
		{"wrong count line", func(a, p []string) ([]string, []string) { a[0] = "31"; return a, p }, nil,
			"list_attr_celeba.txt: line 1 says 31 images, the file lists 30"},
		{"count not a number", func(a, p []string) ([]string, []string) { a[0] = "thirty"; return a, p }, nil,
			`list_attr_celeba.txt: line 1: "thirty" is not the image count`},
		{"row with 39 values", func(a, p []string) ([]string, []string) { a[5] = a[5][:strings.LastIndex(a[5], " ")]; return a, p }, nil,
			"list_attr_celeba.txt: line 6: 39 values, the header names 40 attributes"},
		{"value 0", func(a, p []string) ([]string, []string) { a[4] = strings.Replace(a[4], "-1", " 0", 1); return a, p }, nil,
			`list_attr_celeba.txt: line 5: attribute Arched_Eyebrows is "0", want -1 or 1`},
		{"image without split", func(a, p []string) ([]string, []string) { return a, p[:29] }, nil,
			"list_eval_partition.txt: no split for 000030.jpg"},
		{"bad split", func(a, p []string) ([]string, []string) { p[2] = "000003.jpg 3"; return a, p }, nil,
			`list_eval_partition.txt: line 3: "000003.jpg 3" is not a file name and 0, 1 or 2`},
		{"image missing", nil, func(root string) { os.Remove(filepath.Join(root, Subdir, ImageDir, "000007.jpg")) },
			"img_align_celeba/000007.jpg: missing, but list_attr_celeba.txt lists it"},
		{"corrupt JPEG", nil, func(root string) {
			os.WriteFile(filepath.Join(root, Subdir, ImageDir, "000002.jpg"), []byte("\xff\xd8\xff\xe0 truncated"), 0o644)
		}, "img_align_celeba/000002.jpg: not a readable JPEG"},
		{"unknown task", nil, nil, `-tasks: no attribute "Beard"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture(t, 30, tc.edit)
			if tc.hurt != nil {
				tc.hurt(root)
			}
			tasks := "10"
			if tc.name == "unknown task" {
				tasks = "Male,Beard"
			}
			_, err := Load(root, Options{Tasks: tasks})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	_, err := Load(t.TempDir(), Options{})
	if !errors.Is(err, data.ErrMissing) || !strings.Contains(err.Error(), "mmlab.ie.cuhk.edu.hk") {
		t.Errorf("no data: %v", err)
	}
}

// Attributes are the official file's 40 names, which the fixture writes
// from its own copy: Load reads them back in that order.
func TestAttributesAreTheFilesNames(t *testing.T) {
	dir := testenv.CelebAFixture(t, 5, nil)
	sp, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, task := range sp.Train.Tasks() {
		names = append(names, task.Name)
	}
	if !slices.Equal(names, Attributes) || len(Attributes) != 40 {
		t.Errorf("the file's attributes %v, Attributes %v", names, Attributes)
	}
}
