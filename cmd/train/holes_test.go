package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// real is data/files/testdata/real: cuts of real tables as R and pandas
// export them.
var real = filepath.Join("..", "..", "data", "files", "testdata", "real")

// -stats on a table with string labels gives each class's count and
// name, and its missing labels: survey's first 30 training rows hold 9
// "Female", 21 "Male" (grep -c) and 8 heights NA (awk -F, '$11=="NA"').
func TestStatsClassNames(t *testing.T) {
	o, err := parseFlags([]string{"-data", filepath.Join(real, "survey-r"), "-stats", "-valid", "0"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadData(o.Settings, o.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeStats(&out, d.Train); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Sex            0:9 (Female) 1:21 (Male)", "Height         8 labels missing"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stats output lacks %q:\n%s", want, out.String())
		}
	}
}
