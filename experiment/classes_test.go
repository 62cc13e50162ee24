package experiment

import (
	"errors"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mtsgd/mtsgd/data/files"
	"github.com/mtsgd/mtsgd/internal/sysmem"
)

// A task of absurdly many classes in tasks.json is refused by the memory
// check in well under a second, allocating little, the message naming
// the field; measuring the graphs first would allocate their heads and
// die of a fatal out-of-memory error with no message.
func TestHugeClassesRefusedBeforeAllocating(t *testing.T) {
	t.Setenv(sysmem.Env, "24G")
	for _, classes := range []int{2_000_000_000, 200_000_000} {
		dir := t.TempDir()
		desc := files.Description{Tasks: []files.TaskSpec{
			{Name: "size", Kind: "regression"},
			{Name: "big", Kind: "classification", Classes: classes},
		}}
		if err := files.WriteDescription(dir, desc); err != nil {
			t.Fatal(err)
		}
		x, y := make([]float32, 20*4), make([]float64, 20*2)
		for i := range 20 {
			x[4*i] = float32(i)
			y[2*i], y[2*i+1] = float64(i), float64(i%2)
		}
		for _, name := range []string{files.TrainFile, files.TestFile} {
			if err := files.WriteSplit(filepath.Join(dir, name), x, []int{20, 4}, y); err != nil {
				t.Fatal(err)
			}
		}
		s := Defaults(files.Name)
		s.Files, s.Particles, s.Epochs = &files.Spec{Dir: dir}, 2, 1
		d, _, err := LoadData(s, "")
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err = New(s, d, 1)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		want := []string{"tasks.json: classes " + strconv.Itoa(classes) + " (task big)", "lower classes in tasks.json"}
		if !errors.Is(err, sysmem.ErrTooBig) {
			t.Fatalf("classes %d: error %v, want ErrTooBig", classes, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("classes %d: error %q lacks %q", classes, err, w)
			}
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
			t.Errorf("classes %d: New allocated %d MB before refusing", classes, grown>>20)
		}
		if elapsed > time.Second {
			t.Errorf("classes %d: refused after %v", classes, elapsed)
		}
	}
}
