package gputest

import (
	"fmt"
	"math"

	"github.com/mtsgd/mtsgd/internal/gpu"
)

// geoms are convolution and pooling shapes: LeNet's, ResNet's stride-2
// layers with padding, and odd sizes.
var geoms = []gpu.Geom{
	{N: 2, C: 1, H: 12, W: 12, O: 3, K: 5, Stride: 1, Pad: 0},
	{N: 2, C: 3, H: 9, W: 8, O: 4, K: 3, Stride: 2, Pad: 1},
	{N: 1, C: 2, H: 7, W: 7, O: 2, K: 7, Stride: 2, Pad: 3},
	{N: 3, C: 2, H: 5, W: 6, O: 2, K: 1, Stride: 2, Pad: 0},
}

func withOutput(g gpu.Geom) gpu.Geom {
	g.OH = (g.H+2*g.Pad-g.K)/g.Stride + 1
	g.OW = (g.W+2*g.Pad-g.K)/g.Stride + 1
	return g
}

// checkIm2col checks im2col against its definition and col2im as its
// adjoint: ⟨im2col(x), C⟩ = ⟨x, col2im(C)⟩ for random x and C.
func checkIm2col(k *kit) {
	for _, g := range geoms {
		g = withOutput(g)
		p := g.OH * g.OW
		rows, cols := g.C*g.K*g.K, g.N*p
		x, cm := k.randoms(g.N*g.C*g.H*g.W, -1, 1), k.randoms(rows*cols, -1, 1)
		px, pc, pcols, pdx := k.upload(x), k.upload(cm), k.buffer(k.dt, rows*cols), k.buffer(k.dt, len(x))
		k.launch("im2col", rows*cols, pcols, px, g)
		want := make([]float64, rows*cols)
		for ch := range g.C {
			for i := range g.K {
				for j := range g.K {
					for e := range g.N {
						for oy := range g.OH {
							for ox := range g.OW {
								y, xx := oy*g.Stride-g.Pad+i, ox*g.Stride-g.Pad+j
								if y >= 0 && y < g.H && xx >= 0 && xx < g.W {
									want[((ch*g.K+i)*g.K+j)*cols+e*p+oy*g.OW+ox] = x[((e*g.C+ch)*g.H+y)*g.W+xx]
								}
							}
						}
					}
				}
			}
		}
		got := k.download(pcols, rows*cols)
		k.same(fmt.Sprintf("im2col %+v", g), got, want)
		k.launch("col2im", len(x), pdx, pc, g)
		dx := k.download(pdx, len(x))
		var lhs, rhs float64
		for i := range want {
			lhs += want[i] * cm[i]
		}
		for i := range x {
			rhs += x[i] * dx[i]
		}
		if d := math.Abs(lhs - rhs); d > 100*k.tol()*(1+math.Abs(lhs)) {
			k.t.Fatalf("col2im %+v: ⟨im2col(x), C⟩ = %v, ⟨x, col2im(C)⟩ = %v", g, lhs, rhs)
		}
	}
}

func checkMaxPool(k *kit) {
	pools := []gpu.Geom{
		{N: 2, C: 3, H: 8, W: 8, K: 2, Stride: 2},
		{N: 2, C: 2, H: 9, W: 7, K: 3, Stride: 2, Pad: 1},
	}
	for gi, g := range pools {
		g = withOutput(g)
		planes, p, hw := g.N*g.C, g.OH*g.OW, g.H*g.W
		x, dy := k.randoms(planes*hw, -1, 1), k.randoms(planes*p, -1, 1)
		if gi == 1 {
			// Values on a coarse grid make ties, zeros among them: the
			// first maximum must win, and a window of zeros has none.
			for i := range x {
				x[i] = math.Round(2*x[i]) / 2
			}
		}
		px, pdy := k.upload(x), k.upload(dy)
		py, parg, pdx := k.buffer(k.dt, planes*p), k.buffer(gpu.Float32, planes*p), k.buffer(k.dt, planes*hw)
		k.launch("relu_maxpool", planes*p, py, parg, px, g)
		k.launch("maxpool_grad", planes*hw, pdx, pdy, parg, g)
		wantY, wantArg, wantDx := make([]float64, planes*p), make([]int32, planes*p), make([]float64, planes*hw)
		for pl := range planes {
			for oy := range g.OH {
				for ox := range g.OW {
					best, at := 0.0, int32(-1)
					for i := range g.K {
						for j := range g.K {
							y, xx := oy*g.Stride-g.Pad+i, ox*g.Stride-g.Pad+j
							if y < 0 || y >= g.H || xx < 0 || xx >= g.W {
								continue
							}
							// The first maximum in row-major order wins.
							if v := x[pl*hw+y*g.W+xx]; v > best {
								best, at = v, int32(y*g.W+xx)
							}
						}
					}
					o := pl*p + oy*g.OW + ox
					wantY[o], wantArg[o] = best, at
					if at >= 0 {
						wantDx[pl*hw+int(at)] += dy[o]
					}
				}
			}
		}
		k.same("y", k.download(py, planes*p), wantY)
		args := k.downloadInts(parg, planes*p)
		for i := range args {
			if args[i] != wantArg[i] {
				k.t.Fatalf("argmax[%d] = %d, want %d", i, args[i], wantArg[i])
			}
		}
		k.near("∂x", k.download(pdx, planes*hw), wantDx)
	}
}

func checkAvgPool(k *kit) {
	const planes, inner = 6, 9
	x, dy := k.randoms(planes*inner, -1, 1), k.randoms(planes, -1, 1)
	px, pdy, py, pdx := k.upload(x), k.upload(dy), k.buffer(k.dt, planes), k.buffer(k.dt, planes*inner)
	k.launch("avgpool", planes, py, px, planes, inner)
	k.launch("avgpool_grad", planes*inner, pdx, pdy, planes, inner)
	wantY, wantDx := make([]float64, planes), make([]float64, planes*inner)
	for i := range planes {
		for p := range inner {
			wantY[i] += x[i*inner+p] / inner
			wantDx[i*inner+p] = dy[i] / inner
		}
	}
	k.near("y", k.download(py, planes), wantY)
	k.near("∂x", k.download(pdx, planes*inner), wantDx)
}
