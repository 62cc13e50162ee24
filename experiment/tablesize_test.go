package experiment

import (
	"slices"
	"testing"
)

// The table's MLP: two hidden layers of 256 from 5,000 training rows up
// to 100,000, the SARCOS MLP's three otherwise; recorded in Hidden for a
// new MLP on vectors only.
func TestTableHidden(t *testing.T) {
	for _, tc := range []struct {
		rows int
		want []int
	}{
		{142, []int{256, 256, 256}}, // wine
		{4_999, []int{256, 256, 256}},
		{5_000, []int{256, 256}},
		{8_000, []int{256, 256}}, // diamonds, 10⁴ rows with its test split
		{99_999, []int{256, 256}},
		{100_000, []int{256, 256, 256}},
	} {
		if got := TableHidden(tc.rows); !slices.Equal(got, tc.want) {
			t.Errorf("TableHidden(%d) = %v, want %v", tc.rows, got, tc.want)
		}
	}
	s := Settings{Model: "mlp"}
	s.sizeToTable(8000, []int{26})
	if s.Hidden != "256,256" {
		t.Errorf("Hidden %q, want 256,256", s.Hidden)
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
