package asm

import "testing"

// TestServesFollowSwitches checks each answer of serves.go against the
// switch its routines need and the shapes their documentation gives
// (conv.go, col2im.go, runs.go): with the switch off no shape is served,
// with it on exactly the documented ones.
func TestServesFollowSwitches(t *testing.T) {
	defer func(avx2, avx512, gram bool) { UseAVX2, UseAVX512, GramAVX512 = avx2, avx512, gram }(UseAVX2, UseAVX512, GramAVX512)
	cases := []struct {
		name   string
		on     *bool
		serves func() bool
		want   bool // with the switch on
	}{
		{"thin products", &UseAVX512, ServesThinProducts, true},
		{"conv pools", &UseAVX512, ServesConvPools, true},
		{"gram", &GramAVX512, ServesGram, true},
		{"taps, rows of 32", &UseAVX512, func() bool { return ServesConvTaps(1, 0, 32) }, true},
		{"taps, rows of 33", &UseAVX512, func() bool { return ServesConvTaps(1, 0, 33) }, false},
		{"taps, stride 2", &UseAVX512, func() bool { return ServesConvTaps(2, 0, 8) }, false},
		{"taps, padding 1", &UseAVX512, func() bool { return ServesConvTaps(1, 1, 8) }, false},
		{"col2im, rows of 16", &UseAVX512, func() bool { return ServesCol2imPlanes(1, 0, 16) }, true},
		{"col2im, rows of 17", &UseAVX512, func() bool { return ServesCol2imPlanes(1, 0, 17) }, false},
		{"col2im, stride 2", &UseAVX512, func() bool { return ServesCol2imPlanes(2, 0, 8) }, false},
		{"col2im, padding 1", &UseAVX512, func() bool { return ServesCol2imPlanes(1, 1, 8) }, false},
		{"four planes of 12", &UseAVX2, func() bool { return SumsFourPlanes(12) }, true},
		{"four planes of 10", &UseAVX2, func() bool { return SumsFourPlanes(10) }, false},
	}
	for _, c := range cases {
		*c.on = false
		if c.serves() {
			t.Errorf("%s: served with its switch off", c.name)
		}
		*c.on = true
		if got := c.serves(); got != c.want {
			t.Errorf("%s: served %v with its switch on, want %v", c.name, got, c.want)
		}
	}
}
