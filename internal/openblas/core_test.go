package openblas

import "testing"

func TestBetterCore(t *testing.T) {
	none := features{}
	avx2 := features{avx2FMA: true}
	avx512 := features{avx2FMA: true, avx512: true}
	for _, c := range []struct {
		chosen string
		cpu    features
		want   string
	}{
		// OpenBLAS 0.3.21's fallback for a processor it does not know
		// (Emerald Rapids), on processors of each width.
		{"Prescott", avx512, "SkylakeX"},
		{"Prescott", avx2, "Haswell"},
		{"Prescott", none, ""},
		// Narrower kernels than the features allow.
		{"Sandybridge", avx2, "Haswell"},
		{"Nehalem", avx512, "SkylakeX"},
		// Recognised processors keep OpenBLAS's choice, even where it
		// is narrower than their features (Zen 4 has AVX-512).
		{"Zen", avx512, ""},
		{"Haswell", avx512, ""},
		{"SkylakeX", avx512, ""},
		{"Cooperlake", avx512, ""},
		{"SapphireRapids", avx512, ""},
	} {
		if got := betterCore(c.chosen, c.cpu); got != c.want {
			t.Errorf("betterCore(%q, %+v) = %q, want %q", c.chosen, c.cpu, got, c.want)
		}
	}
}
