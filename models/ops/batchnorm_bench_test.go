package ops

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BenchmarkBatchNormBackward times a graph run of batch normalisation in
// training mode and its three gradients (x, γ, β) on a ResNet-18 layer's
// activations (batch 64, 64 channels of 16×16), as a step's trunk pass
// makes them: most of the time is the gradients', which read the output
// gradient and the input from memory.
//
//	go test ./models/ops -run '^$' -bench BatchNormBackward -benchtime 50x
func BenchmarkBatchNormBackward(b *testing.B) {
	const n, c, side = 64, 64, 16
	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewPCG(5, 6))
	values := func(size int, f func() float32) tensor.Tensor {
		v := make([]float32, size)
		for i := range v {
			v[i] = f()
		}
		return tensor.New(tensor.WithBacking(v), tensor.WithShape(size))
	}
	normal := func() float32 { return float32(rng.NormFloat64()) }
	node := func(name string, t tensor.Tensor, shape ...int) *gorgonia.Node {
		if err := t.Reshape(shape...); err != nil {
			b.Fatal(err)
		}
		return gorgonia.NewTensor(g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(name), gorgonia.WithValue(t))
	}
	x := node("x", values(n*c*side*side, normal), n, c, side, side)
	gamma := node("gamma", values(c, normal), 1, c, 1, 1)
	beta := node("beta", values(c, normal), 1, c, 1, 1)
	weight := node("weight", values(n, func() float32 { return 1.0 / n }), n)
	upstream := node("G", values(n*c*side*side, normal), n, c, side, side)
	y, _, err := BatchNorm(x, gamma, beta, weight, 1e-5)
	if err != nil {
		b.Fatal(err)
	}
	inner, err := Inner(y, upstream)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := gorgonia.Grad(inner, x, gamma, beta); err != nil {
		b.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	b.ResetTimer()
	for range b.N {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/run")
}
