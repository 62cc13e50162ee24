package plan

import (
	"encoding/json"
	"testing"

	"github.com/mtsgd/mtsgd/cmd/compare/internal/study"
)

// FuzzAssessment feeds checkAssessment any assessment block beside a
// committed run's history (the paper study's linear-seed1): it must never
// panic, and an assessment it accepts has last/ at the history's last
// epoch and best/ within it.
func FuzzAssessment(f *testing.F) {
	var r Result
	readJSON(f, "../../../../docs/results/paper-multi-mnist/linear-seed1/"+ResultFile, &r)
	tasks, err := checkHistory(r.Settings, r.History, false)
	if err != nil {
		f.Fatal(err)
	}
	epochs := r.History[len(r.History)-1].Epoch
	seed, err := json.Marshal(r.Assessed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"last":{"epoch":100,"tasks":[]}}`))
	f.Add([]byte(`{"last":{"epoch":100,"tasks":[{"task":"top-left"}],"ood":{"tasks":[{},{},{}]}},"best":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var a study.Assessed
		if json.Unmarshal(b, &a) != nil {
			return
		}
		if checkAssessment(&a, r.History, tasks, epochs, "multi-fashion") == nil {
			if a.Last.Epoch != epochs || a.Best == nil || a.Best.Epoch < 1 || a.Best.Epoch > epochs {
				t.Errorf("accepted last/ at %d, best/ %+v", a.Last.Epoch, a.Best)
			}
		}
	})
}
