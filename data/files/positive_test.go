package files

import (
	"math"
	"strings"
	"testing"
)

// A positive regression task trains on log y: its scale is the mean and
// deviation of the logs (targets 1, e, e²: logs 0, 1, 2, mean 1, population
// deviation √(2/3)), the network's output maps back through exp, and a
// target at or below 0 is refused by line.
func TestPositiveTask(t *testing.T) {
	tasks := `{"tasks": [{"name": "price", "kind": "regression", "positive": true}], "input": "none"}`
	train := "a,price\n1,1\n2,2.718281828459045\n3,7.38905609893065\n"
	d, err := Load(writeDir(t, map[string]string{TasksFile: tasks, "train.csv": train, "test.csv": train}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := d.Spec.Targets["price"]
	if math.Abs(sc.Mean-1) > 1e-6 || math.Abs(sc.Std-math.Sqrt(2.0/3)) > 1e-6 || !d.Spec.Tasks[0].Positive {
		t.Errorf("scale %+v, positive %v; want mean 1, std %v", sc, d.Spec.Tasks[0].Positive, math.Sqrt(2.0/3))
	}
	task := d.Spec.DataTasks()[0]
	if !task.Log {
		t.Fatal("the task does not train on logs")
	}
	// e² is log 2, standardised (2 − 1)/√(2/3); and back.
	want := 1 / math.Sqrt(2.0/3)
	if got := task.Standardize(math.Exp(2)); math.Abs(got-want) > 1e-6 {
		t.Errorf("Standardize(e²) = %v, want %v", got, want)
	}
	if got := task.Unstandardize(want); math.Abs(got-math.Exp(2)) > 1e-5 {
		t.Errorf("Unstandardize = %v, want e²", got)
	}
	if got := task.Unstandardize(-50); !(got > 0) {
		t.Errorf("a very negative output maps to %v, not above 0", got)
	}
	for _, bad := range []string{"0", "-3"} {
		_, err := Load(writeDir(t, map[string]string{TasksFile: tasks, "train.csv": "a,price\n1,1\n2," + bad + "\n"}), Options{Valid: 1})
		if err == nil || !strings.Contains(err.Error(), `line 3, column "price"`) || !strings.Contains(err.Error(), "positive") {
			t.Errorf("target %s: %v", bad, err)
		}
	}
	_, err = Load(writeDir(t, map[string]string{TasksFile: `{"tasks": [{"name": "y", "kind": "classification", "positive": true}]}`, "train.csv": train}), Options{Valid: 1})
	if err == nil || !strings.Contains(err.Error(), `"positive" is for a regression task`) {
		t.Errorf("positive classification: %v", err)
	}
}
