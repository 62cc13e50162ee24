package resnet18

import "math"

// reference is ResNet-18's trunk written directly, as loops over pixels,
// to check the Gorgonia graph against: nothing is shared with resnet18.go
// but the block list and the order of the parameters.
type reference struct {
	r      *ResNet
	params []float64
}

func newReference(r *ResNet, params []float64) *reference { return &reference{r: r, params: params} }

// image is a batch of feature maps, [example][channel][row][column].
type image struct {
	n, c, h, w int
	v          []float64
}

func newImage(n, c, h, w int) *image {
	return &image{n: n, c: c, h: h, w: w, v: make([]float64, n*c*h*w)}
}

func (m *image) at(i, c, y, x int) *float64 { return &m.v[((i*m.c+c)*m.h+y)*m.w+x] }

// forward runs the trunk on x (batch × 3 × side × side). In training mode
// (running nil) batch norms use the statistics of the first real
// examples and the statistics are returned; otherwise they use running.
func (ref *reference) forward(x []float64, batch, real int, running []float64) (features, stats []float64) {
	side := ref.r.side
	in := &image{n: batch, c: 3, h: side, w: side, v: x}
	params := ref.params
	take := func(n int) []float64 { p := params[:n]; params = params[n:]; return p }
	bn := func(m *image) *image {
		gamma, beta := take(m.c), take(m.c)
		means, vars := make([]float64, m.c), make([]float64, m.c)
		if running == nil {
			count := float64(real * m.h * m.w)
			for c := range m.c {
				for i := range real {
					for y := range m.h {
						for x := range m.w {
							means[c] += *m.at(i, c, y, x) / count
						}
					}
				}
				for i := range real {
					for y := range m.h {
						for x := range m.w {
							d := *m.at(i, c, y, x) - means[c]
							vars[c] += d * d / count
						}
					}
				}
			}
			stats = append(append(stats, means...), vars...)
		} else {
			copy(means, running[:m.c])
			copy(vars, running[m.c:2*m.c])
			running = running[2*m.c:]
		}
		out := newImage(m.n, m.c, m.h, m.w)
		for i := range m.n {
			for c := range m.c {
				for y := range m.h {
					for x := range m.w {
						*out.at(i, c, y, x) = (*m.at(i, c, y, x)-means[c])/math.Sqrt(vars[c]+1e-5)*gamma[c] + beta[c]
					}
				}
			}
		}
		return out
	}
	conv := func(m *image, out, k, stride, pad int) *image {
		w := take(out * m.c * k * k)
		oh, ow := (m.h+2*pad-k)/stride+1, (m.w+2*pad-k)/stride+1
		res := newImage(m.n, out, oh, ow)
		for i := range m.n {
			for o := range out {
				for y := range oh {
					for x := range ow {
						s := 0.0
						for c := range m.c {
							for ky := range k {
								for kx := range k {
									yy, xx := y*stride-pad+ky, x*stride-pad+kx
									if yy < 0 || yy >= m.h || xx < 0 || xx >= m.w {
										continue
									}
									s += w[((o*m.c+c)*k+ky)*k+kx] * *m.at(i, c, yy, xx)
								}
							}
						}
						*res.at(i, o, y, x) = s
					}
				}
			}
		}
		return res
	}
	relu := func(m *image) *image {
		for i, v := range m.v {
			m.v[i] = max(v, 0)
		}
		return m
	}
	h := relu(bn(conv(in, ref.r.width, 7, 2, 3)))
	// Max-pool 3×3, stride 2, padding 1 (padding never wins).
	ph, pw := (h.h+2-3)/2+1, (h.w+2-3)/2+1
	pooled := newImage(h.n, h.c, ph, pw)
	for i := range h.n {
		for c := range h.c {
			for y := range ph {
				for x := range pw {
					best := math.Inf(-1)
					for ky := range 3 {
						for kx := range 3 {
							yy, xx := 2*y-1+ky, 2*x-1+kx
							if yy >= 0 && yy < h.h && xx >= 0 && xx < h.w {
								best = max(best, *h.at(i, c, yy, xx))
							}
						}
					}
					*pooled.at(i, c, y, x) = best
				}
			}
		}
	}
	h = pooled
	for _, b := range ref.r.blocks() {
		out := relu(bn(conv(h, b.out, 3, b.stride, 1)))
		out = bn(conv(out, b.out, 3, 1, 1))
		shortcut := h
		if b.hasShortcut {
			shortcut = bn(conv(h, b.out, 1, b.stride, 0))
		}
		for i := range out.v {
			out.v[i] = max(out.v[i]+shortcut.v[i], 0)
		}
		h = out
	}
	features = make([]float64, h.n*h.c)
	for i := range h.n {
		for c := range h.c {
			for y := range h.h {
				for x := range h.w {
					features[i*h.c+c] += *h.at(i, c, y, x) / float64(h.h*h.w)
				}
			}
		}
	}
	return features, stats
}
