package files

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mtsgd/mtsgd/data/npz"
)

// WriteSplit writes the archive of one split to path: x, of shape
// (N, ...) and type []uint8, []float32 or []float64, and, unless y is
// nil, y as N×K float64 targets (K = len(y)/N). It is how a data
// directory can be written from Go (see docs/own-data.md).
func WriteSplit(path string, x any, shape []int, y []float64) error {
	var descr string
	switch x.(type) {
	case []uint8:
		descr = "|u1"
	case []float32:
		descr = "<f4"
	case []float64:
		descr = "<f8"
	default:
		return fmt.Errorf("files: inputs of type %T, want []uint8, []float32 or []float64", x)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := npz.NewWriter(f)
	out, err := w.Create("x", descr, shape)
	if err == nil {
		err = binary.Write(out, binary.LittleEndian, x)
	}
	if err == nil && y != nil {
		n := shape[0]
		if n == 0 || len(y)%n != 0 {
			err = fmt.Errorf("files: %d targets for %d examples", len(y), n)
		} else {
			err = w.WriteFloat64("y", []int{n, len(y) / n}, y)
		}
	}
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteDescription writes desc as dir/tasks.json.
func WriteDescription(dir string, desc Description) error {
	b, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, TasksFile), append(b, '\n'), 0o644)
}
