package experiment

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mtsgd/mtsgd/engine"
)

// Each named choice reads every name its flag takes and writes it back
// unchanged; "" is the unnamed value; any other name is refused with the
// flag's message.
func TestChoicesRoundTrip(t *testing.T) {
	type choice interface {
		String() string
		MarshalText() ([]byte, error)
	}
	for _, tc := range []struct {
		flag  string
		names []string
		parse func(string) (choice, error)
	}{
		{"-optimizer", []string{"", "sgd", "adam"}, func(n string) (choice, error) { return ParseOptimizer(n) }},
		{"-score-scale", []string{"", "mean", "sum", "normalized"}, func(n string) (choice, error) { return ParseScoreScale(n) }},
		{"-u-terms", []string{"", "full", "first"}, func(n string) (choice, error) { return ParseUTerms(n) }},
		{"-kernel-on", []string{"", "params", "outputs"}, func(n string) (choice, error) { return ParseKernelSpace(n) }},
		{"-order", []string{"", "joint", "heads-first"}, func(n string) (choice, error) { return ParseUpdateOrder(n) }},
		{"-lr-schedule", []string{"", "multistep", "exponential", "constant"}, func(n string) (choice, error) { return ParseSchedule(n) }},
		{"-dtype", []string{"", "float32", "float64"}, func(n string) (choice, error) { return ParseDtype(n) }},
	} {
		for _, name := range tc.names {
			v, err := tc.parse(name)
			if err != nil {
				t.Errorf("%s %q: %v", tc.flag, name, err)
				continue
			}
			b, _ := v.MarshalText()
			if v.String() != name || string(b) != name {
				t.Errorf("%s %q reads back as %q, marshals as %q", tc.flag, name, v.String(), b)
			}
		}
		if _, err := tc.parse("bogus"); err == nil || !strings.HasPrefix(err.Error(), tc.flag) {
			t.Errorf("%s bogus: error %v, want one naming %s", tc.flag, err, tc.flag)
		}
	}
}

// The engine's values the score scales and kernel spaces stand for, by
// the engine's own constants; unnamed is the engine's default.
func TestChoicesEngineValues(t *testing.T) {
	for s, want := range map[ScoreScale]engine.ScoreScale{
		ScaleUnnamed: engine.ScoreMean, ScaleMean: engine.ScoreMean, ScaleSum: engine.ScoreSum, ScaleNormalized: engine.ScoreNormalized,
	} {
		if s.Engine() != want {
			t.Errorf("%q: engine scale %v, want %v", s, s.Engine(), want)
		}
	}
	for k, want := range map[KernelSpace]engine.KernelSpace{
		KernelUnnamed: engine.KernelParams, KernelOnParams: engine.KernelParams, KernelOnOutputs: engine.KernelOutputs,
	} {
		if k.Engine() != want {
			t.Errorf("%q: engine space %v, want %v", k, k.Engine(), want)
		}
	}
}

// Settings decode and encode back byte for byte, an unnamed choice
// omitted where its field is omitempty; a name that is no choice fails
// the decoding with the flag's message.
func TestSettingsChoicesJSON(t *testing.T) {
	for _, s := range []Settings{Defaults("multi-mnist"), Defaults("multi-mnist").ForMethod("linear"), {}} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Settings
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(b) {
			t.Errorf("settings encode as\n%s\nafter decoding\n%s", again, b)
		}
	}
	b, _ := json.Marshal(Settings{})
	for _, key := range []string{"score_scale", "u_terms", "kernel_on", "order"} {
		if strings.Contains(string(b), key) {
			t.Errorf("unnamed %s encoded: %s", key, b)
		}
	}
	for _, key := range []string{"optimizer", "lr_schedule", "dtype"} {
		if !strings.Contains(string(b), `"`+key+`":""`) {
			t.Errorf("unnamed %s not encoded as \"\": %s", key, b)
		}
	}
	var s Settings
	err := json.Unmarshal([]byte(`{"order":"trunk-first"}`), &s)
	if err == nil || !strings.Contains(err.Error(), "-order must be joint or heads-first") {
		t.Errorf("order trunk-first decoded with error %v", err)
	}
}
