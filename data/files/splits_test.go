package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/data"
)

// A split's name that is there but cannot be opened is refused by name,
// not taken as no split: a dangling test split would have the validation
// split scored as the test split, a dangling validation split would hold
// out training examples.
func TestSplitThereButUnopenable(t *testing.T) {
	for _, name := range []string{"test.npz", "valid.npz", "test.csv", "valid.csv", "train.csv"} {
		t.Run(name, func(t *testing.T) {
			dir := vectors(t, twoTasks, 40)
			if strings.HasPrefix(name, "test") {
				os.Remove(filepath.Join(dir, TestFile))
			}
			path := filepath.Join(dir, name)
			if err := os.Symlink(filepath.Join(dir, "gone", name), path); err != nil {
				t.Skip(err)
			}
			_, err := Load(dir, Options{Valid: 10, Seed: 1})
			if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), path+" is there but cannot be opened") {
				t.Errorf("%s a dangling symlink: %v", name, err)
			}
		})
	}
}
