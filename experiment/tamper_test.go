package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/internal/sysmem"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// A checkpoint whose position, history or settings do not fit the run is
// refused by Restore, naming what is wrong, before it resumes: no slice
// bounds panic at a negative batch, no history of nonsense epochs, no
// 518 GB of batch buffers. The run: 1 epoch of 3 batches (40 examples,
// batch 16), 2 tasks, a test set only; its checkpoint is at epoch 1,
// batch 0, step 3 with 2 history lines. The machine is taken to have 24
// GiB.
func TestRestoreRefusesTamperedCheckpoints(t *testing.T) {
	t.Setenv(sysmem.Env, "24G")
	out := t.TempDir()
	if err := newRun(t, testSettings(1), out).Train(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string // empty: restores
	}{
		{"as saved", func(map[string]any) {}, ""},
		{"evaluation interrupted", func(m map[string]any) { m["epoch"], m["batch"], m["step"] = 0, 3, 3; setHistory(m, 0) }, ""},
		{"batch -5", func(m map[string]any) { m["batch"] = -5 }, "position epoch 1, batch -5, step 3: none may be negative"},
		{"batch 99999", func(m map[string]any) { m["batch"], m["step"] = 99999, 100002 },
			"checkpoint: batch 99999 is past the 3 batches of an epoch (40 training examples, batch size 16)"},
		{"epoch -1", func(m map[string]any) { m["epoch"] = -1 }, "position epoch -1, batch 0, step 3: none may be negative"},
		{"step -100", func(m map[string]any) { m["step"] = -100 }, "position epoch 1, batch 0, step -100: none may be negative"},
		{"step 4", func(m map[string]any) { m["step"] = 4 }, "checkpoint: step 4 does not follow from epoch 1 and batch 0 of epochs of 3 batches"},
		{"epoch 5", func(m map[string]any) { m["epoch"], m["step"] = 5, 15 }, "checkpoint: metrics: 2 history lines for 5 epochs of 2 lines"},
		{"epoch 2^62", func(m map[string]any) { m["epoch"], m["step"] = json.Number("4611686018427387904"), 3 },
			"checkpoint: step 3 does not follow from epoch 4611686018427387904"},
		{"history of epoch 7", func(m map[string]any) { setHistory(m, 7) }, "checkpoint: metrics: a history line of epoch 7, outside 1..1"},
		// The graphs take at most the training split's rows, so a huge
		// batch costs no memory here; the saved position no longer fits.
		{"settings: batch 1e8", func(m map[string]any) { testenv.SetJSON(m, 100_000_000, "settings", "batch") },
			"checkpoint: step 3 does not follow from epoch 1 and batch 0 of epochs of 1 batches"},
		{"settings: batch 0", func(m map[string]any) { testenv.SetJSON(m, 0, "settings", "batch") }, "-batch must be at least 1"},
		{"settings: particles 1e5", func(m map[string]any) { testenv.SetJSON(m, 100_000, "settings", "particles") },
			"not enough memory: -particles 100000: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "last")
			testenv.CopyDir(t, filepath.Join(out, "last"), dir)
			testenv.EditJSON(t, filepath.Join(dir, checkpoints.ManifestName), tc.edit)
			c, err := checkpoints.Load(dir)
			if err == nil {
				_, err = Restore(c, Data{Train: train, Test: test}, 2)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			case strings.Contains(tc.want, "not enough memory") && !errors.Is(err, sysmem.ErrTooBig):
				t.Errorf("error %v does not wrap sysmem.ErrTooBig", err)
			}
		})
	}
}

// setHistory sets the epoch of every history line of a manifest's
// metrics; 0 empties the history (and best/ holds no epoch).
func setHistory(m map[string]any, epoch int) {
	metrics := m["metrics"].(map[string]any)
	history := metrics["history"].([]any)
	if epoch == 0 {
		metrics["history"], metrics["best_epoch"] = []any{}, 0
		return
	}
	for _, l := range history {
		l.(map[string]any)["epoch"] = epoch
	}
}
