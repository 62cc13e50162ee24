package experiment

import (
	"slices"
	"testing"
)

// The table's MLP: from 5,000 training rows up to 100,000, two hidden
// layers of the input's features rounded up to a power of two, within
// 128..256 (26 → 32 → 128; 129 → 256; 200 → 256; 1000 → 256); the SARCOS
// MLP's three of 256 otherwise. Recorded in Hidden for a new MLP on
// vectors only.
func TestTableHidden(t *testing.T) {
	for _, tc := range []struct {
		rows, features int
		want           []int
	}{
		{142, 13, []int{256, 256, 256}}, // wine
		{4_999, 26, []int{256, 256, 256}},
		{5_000, 26, []int{128, 128}},
		{8_000, 21, []int{128, 128}}, // diamonds: 10⁴ rows with its test split, 21 features
		{8_000, 128, []int{128, 128}},
		{8_000, 129, []int{256, 256}},
		{8_000, 1000, []int{256, 256}},
		{99_999, 26, []int{128, 128}},
		{100_000, 26, []int{256, 256, 256}},
	} {
		if got := TableHidden(tc.rows, tc.features); !slices.Equal(got, tc.want) {
			t.Errorf("TableHidden(%d, %d) = %v, want %v", tc.rows, tc.features, got, tc.want)
		}
	}
	s := Settings{Model: "mlp"}
	s.sizeToTable(8000, []int{26})
	if s.Hidden != "128,128" {
		t.Errorf("Hidden %q, want 128,128", s.Hidden)
	}
	for _, tc := range []struct {
		s     Settings
		shape []int
	}{
		{Settings{Model: "mlp", Hidden: "32"}, []int{26}}, // -hidden
		{Settings{Model: "lenet"}, []int{26}},
		{Settings{Model: "mlp"}, []int{1, 36, 36}}, // images
	} {
		want := tc.s.Hidden
		tc.s.sizeToTable(8000, tc.shape)
		if tc.s.Hidden != want {
			t.Errorf("%+v on %v: Hidden set to %q", tc.s, tc.shape, tc.s.Hidden)
		}
	}
}
