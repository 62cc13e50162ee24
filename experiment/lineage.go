package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/mtsgd/mtsgd/checkpoints"
	"github.com/mtsgd/mtsgd/internal/jsondiff"
)

// ErrOtherRun is CheckSameRun's error for a last/ of another run.
var ErrOtherRun = errors.New("not this run's checkpoint")

// CheckSameRun checks that the checkpoint in lastDir, a run directory's
// last/, belongs to the run whose best/ checkpoint is in bestDir: the
// same settings but for the epochs (a resume may extend them) and the
// data directory (-data may name where it moved), and histories of which
// one begins with the other. A last/ of another run, or of another data
// set, would carry on under this run's name and replace its best/ and
// metrics.jsonl. A copy of best/ (the way to recover a damaged last/)
// belongs. Only the manifests are read.
func CheckSameRun(lastDir, bestDir string) error {
	last, err := checkpoints.LoadManifest(lastDir)
	if err != nil {
		return err
	}
	best, err := checkpoints.LoadManifest(bestDir)
	if err != nil {
		return err
	}
	foreign := func(why string) error {
		return fmt.Errorf("%s is %w: %s; it belongs to another run (restore this run's with cp -r %s %s, or resume the other run from its own directory)",
			lastDir, ErrOtherRun, why, bestDir, lastDir)
	}
	if fields := settingsDiffer(last.Settings, best.Settings); len(fields) > 0 {
		return foreign(fmt.Sprintf("its settings differ from %s's in %s", bestDir, strings.Join(fields, ", ")))
	}
	var ls, bs runState
	if err := json.Unmarshal(last.Metrics, &ls); err != nil {
		return fmt.Errorf("%s: checkpoint metrics: %w", lastDir, err)
	}
	if err := json.Unmarshal(best.Metrics, &bs); err != nil {
		return fmt.Errorf("%s: checkpoint metrics: %w", bestDir, err)
	}
	for i := range min(len(ls.History), len(bs.History)) {
		if l := ls.History[i]; !reflect.DeepEqual(l, bs.History[i]) {
			return foreign(fmt.Sprintf("its scores of epoch %d (%s, task %s) differ from %s's", l.Epoch, l.Split, l.Task, bestDir))
		}
	}
	return nil
}

// settingsDiffer names the settings, as their JSON keys, in which two
// checkpoints' settings differ, leaving out those a resume of the same
// run may change: the epochs and the file data set's directory, whose
// content its hashes identify (compared where both record them).
func settingsDiffer(a, b json.RawMessage) []string {
	var ma, mb map[string]any
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		if string(a) == string(b) {
			return nil
		}
		return []string{"their encoding"}
	}
	for _, m := range []map[string]any{ma, mb} {
		delete(m, "epochs")
	}
	fa, _ := ma["files"].(map[string]any)
	fb, _ := mb["files"].(map[string]any)
	if fa != nil && fb != nil {
		delete(fa, "dir")
		delete(fb, "dir")
		if fa["sha256"] == nil || fb["sha256"] == nil {
			delete(fa, "sha256")
			delete(fb, "sha256")
		}
	}
	var differ []string
	for _, k := range jsondiff.Keys(ma, mb) {
		switch {
		case reflect.DeepEqual(ma[k], mb[k]):
		case k == "files" && fa != nil && fb != nil:
			for _, f := range jsondiff.Keys(fa, fb) {
				if !reflect.DeepEqual(fa[f], fb[f]) {
					differ = append(differ, "files."+f)
				}
			}
		default:
			differ = append(differ, fmt.Sprintf("%s (%s in last/, %s in best/)", k, jsondiff.Short(ma[k], 40), jsondiff.Short(mb[k], 40)))
		}
	}
	return differ
}
