//go:build cgo

package particles

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mtsgd/mtsgd/internal/gpu"
	"github.com/mtsgd/mtsgd/internal/gpu/kernels"
)

// TestDirectionOnDevice runs each device rule's matrix-product form on the
// emulated GPU against Direction on the same ensembles: φ agrees to 1e-10
// relative to its largest entry, and MT-SGD's U to 1e-10 and w* to 1e-8
// (Gram-matrix distances and reordered sums against direct ones, in
// float64; w* is the QP's solution, certified to its own tolerance).
func TestDirectionOnDevice(t *testing.T) {
	dev := kernels.NewEmulator()
	defer dev.Close()
	rules := []struct {
		name string
		new  func() DeviceRule
	}{
		{"mtsgd", func() DeviceRule { return &MTSGD{Repulsion: 0.7} }},
		{"mtsgd-first-term", func() DeviceRule { return &MTSGD{Repulsion: 0.7, FirstTermOnly: true} }},
		{"mtsgd-bandwidth", func() DeviceRule { return &MTSGD{Kernel: RBF{Bandwidth: 3}, Repulsion: 1} }},
		{"svgd", func() DeviceRule { return &SVGD{Kernel: RBF{Scale: 0.5}, Repulsion: 0.3} }},
		{"svgd-weights", func() DeviceRule { return &SVGD{Repulsion: 1} }},
		{"linear", func() DeviceRule { return &Linear{} }},
		{"warmup", func() DeviceRule { return Warmup{} }},
		{"mgda", func() DeviceRule { return &MGDA{} }},
		{"moo-svgd", func() DeviceRule { return &MOOSVGD{Kernel: RBF{Scale: 0.5}, Repulsion: 0.3} }},
		{"pareto-mtl", func() DeviceRule { return &ParetoMTL{} }},
		{"pareto-mtl-feasibility", func() DeviceRule { return &ParetoMTL{InitSteps: 5} }},
	}
	for _, rule := range rules {
		for seed := range uint64(6) {
			m, k, d := []int{1, 3, 5}[seed%3], 1+int(seed%3), []int{7, 300}[seed%2]
			t.Run(fmt.Sprintf("%s/seed=%d/M=%d/K=%d/d=%d", rule.name, seed, m, k, d), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				e := randomEnsemble(rng, m, k, d)
				// Pareto MTL's objective values and preference vectors,
				// positive, the same for every copy of the rule.
				prefs := make([][]float64, m)
				e.Values = make([][]float64, k)
				for t := range k {
					e.Values[t] = make([]float64, m)
					for a := range m {
						e.Values[t][a] = 0.1 + rng.Float64()
					}
				}
				for a := range prefs {
					for range k {
						prefs[a] = append(prefs[a], rng.Float64())
					}
				}
				fit := func(r DeviceRule) DeviceRule {
					if p, ok := r.(*ParetoMTL); ok {
						p.Prefs = prefs
					}
					return r
				}
				cpu, gpuRule := fit(rule.new()), fit(rule.new())
				if s, ok := cpu.(*SVGD); ok && rule.name == "svgd-weights" {
					// k weights that are not equal, the same for both.
					for i := range k {
						s.Weights = append(s.Weights, float64(i+1))
					}
					gpuRule.(*SVGD).Weights = s.Weights
				}
				want := make([][]float64, m)
				for i := range want {
					want[i] = make([]float64, d)
				}
				if err := cpu.Direction(want, e); err != nil {
					t.Fatal(err)
				}

				upload := func(rows [][]float64) gpu.Ptr {
					var flat []float64
					for _, r := range rows {
						flat = append(flat, r...)
					}
					p, err := dev.Alloc(8 * len(flat))
					if err != nil {
						t.Fatal(err)
					}
					if err := dev.Upload(p, gpu.Bytes(flat)); err != nil {
						t.Fatal(err)
					}
					return p
				}
				var all [][]float64
				for _, s := range e.Scores {
					all = append(all, s...)
				}
				theta, scores := upload(e.Theta), upload(all)
				dst, err := dev.Alloc(8 * m * d)
				if err != nil {
					t.Fatal(err)
				}
				de := DeviceEnsemble{Theta: theta, Scores: scores, M: m, K: k, D: d, Values: e.Values}
				if err := gpuRule.DirectionOnDevice(dev, dst, de); err != nil {
					t.Fatal(err)
				}
				got := make([]float64, m*d)
				if err := dev.Download(gpu.Bytes(got), dst); err != nil {
					t.Fatal(err)
				}
				// With the scores negated, −φ bit for bit, and the same
				// U and w* (checked below against the CPU's).
				for i := range all {
					for j := range all[i] {
						all[i][j] = -all[i][j]
					}
				}
				negScores := upload(all)
				de.Scores, de.Negated = negScores, true
				negRule := fit(rule.new())
				if s, ok := gpuRule.(*SVGD); ok {
					negRule.(*SVGD).Weights = s.Weights
				}
				if err := negRule.DirectionOnDevice(dev, dst, de); err != nil {
					t.Fatal(err)
				}
				neg := make([]float64, m*d)
				if err := dev.Download(gpu.Bytes(neg), dst); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if neg[i] != -got[i] {
						t.Fatalf("negated: entry %d is %v, want −%v", i, neg[i], got[i])
					}
				}
				for _, p := range []gpu.Ptr{theta, scores, negScores, dst} {
					dev.Free(p)
				}
				if n := dev.Live(); n != 0 {
					t.Errorf("%d device buffers left", n)
				}

				if c, ok := cpu.(*MTSGD); ok {
					for _, g := range []*MTSGD{gpuRule.(*MTSGD), negRule.(*MTSGD)} {
						near(t, "U", g.Diagnostics().U, c.Diagnostics().U, 1e-10)
						near(t, "w*", g.Diagnostics().Weights, c.Diagnostics().Weights, 1e-8)
					}
				}
				var flat []float64
				for _, r := range want {
					flat = append(flat, r...)
				}
				near(t, "φ", got, flat, 1e-10)
			})
		}
	}
}

// With a DeviceWork kept across calls, a device rule's second call
// allocates and frees nothing on the device, reads back its small
// matrices in one copy and sends its mixing matrices in one, and gives
// bit for bit what a call with scratch of its own gives; Release frees
// the scratch.
func TestDirectionOnDeviceKeepsWork(t *testing.T) {
	emu := kernels.NewEmulator()
	defer emu.Close()
	dev := gpu.NewCounting(emu)
	const m, k, d = 3, 2, 50
	for _, rule := range []struct {
		name string
		new  func() DeviceRule
	}{
		{"mtsgd", func() DeviceRule { return &MTSGD{Repulsion: 0.7} }},
		{"svgd", func() DeviceRule { return &SVGD{Repulsion: 0.3} }},
		{"linear", func() DeviceRule { return &Linear{} }},
		{"warmup", func() DeviceRule { return Warmup{} }},
		{"mgda", func() DeviceRule { return &MGDA{} }},
		{"moo-svgd", func() DeviceRule { return &MOOSVGD{Kernel: RBF{Scale: 0.5}, Repulsion: 0.3} }},
		{"pareto-mtl", func() DeviceRule { return &ParetoMTL{} }},
		{"pareto-mtl-feasibility", func() DeviceRule { return &ParetoMTL{InitSteps: 5} }},
	} {
		t.Run(rule.name, func(t *testing.T) {
			e := randomEnsemble(rand.New(rand.NewPCG(3, 7)), m, k, d)
			flat := func(rows [][]float64) []float64 {
				var f []float64
				for _, r := range rows {
					f = append(f, r...)
				}
				return f
			}
			var scores []float64
			for _, s := range e.Scores {
				scores = append(scores, flat(s)...)
			}
			ptrs := map[string]gpu.Ptr{}
			for name, v := range map[string][]float64{"theta": flat(e.Theta), "scores": scores, "own": make([]float64, m*d), "kept": make([]float64, m*d)} {
				p, err := dev.Alloc(8 * len(v))
				if err != nil {
					t.Fatal(err)
				}
				if err := dev.Upload(p, gpu.Bytes(v)); err != nil {
					t.Fatal(err)
				}
				ptrs[name] = p
			}
			// Pareto MTL's objective values and preference vectors.
			values, prefs := [][]float64{{0.5, 1, 2}, {1.5, 0.5, 1}}, [][]float64{{1, 0}, {0.6, 0.8}, {0, 1}}
			fit := func(r DeviceRule) DeviceRule {
				if p, ok := r.(*ParetoMTL); ok {
					p.Prefs = prefs
				}
				return r
			}
			de := DeviceEnsemble{Theta: ptrs["theta"], Scores: ptrs["scores"], M: m, K: k, D: d, Values: values}
			if err := fit(rule.new()).DirectionOnDevice(dev, ptrs["own"], de); err != nil {
				t.Fatal(err)
			}
			de.Work = &DeviceWork{}
			r := fit(rule.new())
			for call := range 2 {
				before := dev.Counts()
				if err := r.DirectionOnDevice(dev, ptrs["kept"], de); err != nil {
					t.Fatal(err)
				}
				c := dev.Counts().Sub(before)
				downloads := 1 // the Gram matrices; none for the rules that need no kernel
				if rule.name == "linear" || rule.name == "warmup" {
					downloads = 0
				}
				if call == 1 && (c.Allocs != 0 || c.Frees != 0 || c.Downloads != downloads || c.Uploads != 1) {
					t.Errorf("second call: %v; want no allocation or free, %d downloads, 1 upload", c, downloads)
				}
			}
			own, kept := make([]float64, m*d), make([]float64, m*d)
			if err := dev.Download(gpu.Bytes(own), ptrs["own"]); err != nil {
				t.Fatal(err)
			}
			if err := dev.Download(gpu.Bytes(kept), ptrs["kept"]); err != nil {
				t.Fatal(err)
			}
			for i := range own {
				if own[i] != kept[i] {
					t.Fatalf("φ[%d] = %v with kept scratch, %v with its own", i, kept[i], own[i])
				}
			}
			if err := de.Work.Release(); err != nil {
				t.Fatal(err)
			}
			for _, p := range ptrs {
				dev.Free(p)
			}
			if n := emu.Live(); n != 0 {
				t.Errorf("%d device buffers left", n)
			}
		})
	}
}

// TestDirectionOnDeviceRefusesEmpty checks the shapes a device rule
// refuses.
func TestDirectionOnDeviceRefusesEmpty(t *testing.T) {
	dev := kernels.NewEmulator()
	defer dev.Close()
	for _, e := range []DeviceEnsemble{{M: 0, K: 1, D: 3}, {M: 2, K: 0, D: 3}, {M: 2, K: 1, D: 0}} {
		if err := (&SVGD{}).DirectionOnDevice(dev, 0, e); err == nil {
			t.Errorf("%+v: no error", e)
		}
	}
	// Products that are not those the rule lists.
	e := DeviceEnsemble{M: 2, K: 1, D: 3}
	for _, grams := range [][][]float64{nil, {make([]float64, 3)}, {make([]float64, 4), nil}} {
		if err := (&SVGD{}).DirectionFromGrams(dev, 0, e, grams); err == nil {
			t.Errorf("SVGD from %d products: no error", len(grams))
		}
	}
	if err := (&Linear{}).DirectionFromGrams(dev, 0, e, [][]float64{{1}}); err == nil {
		t.Errorf("Linear from a product: no error")
	}
}

// near fails unless got and want agree to tol relative to the largest
// |want|.
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 1e-300
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}
