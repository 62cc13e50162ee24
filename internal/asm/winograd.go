package asm

// The transforms of Winograd's F(2×2, 3×3) that the gradients of a
// convolution read (models/ops' winograd.go has the method): the output
// gradient's tiles, the input gradient's tiles and their fold into the
// planes, and the filter gradient's. Each takes sixteen tiles, positions
// or filters a step with UseAVX512 (winograd_amd64.s), with the same
// arithmetic in the same order as its Go loop, so the same bits. A
// transform's 16 matrices lie some stride apart (zs, ds, ms), entry ξ of
// a tile's transform in matrix ξ.

// WinogradGradTiles sets z[ξ·zs + t] = (A Ȳ_t Aᵀ)[ξ] for the tiles t <
// len(idx), Ȳ_t being the 2×2 entries of src (rows ow apart) from idx[t]
// on (WinogradTileIndex). z must hold 15·zs + len(idx) values.
func WinogradGradTiles(z []float32, zs int, src []float32, idx []int32, ow int) {
	if UseAVX512 {
		winoGradTilesFloat32(z, zs, src, idx, ow)
		return
	}
	gradTilesGo(z, zs, src, idx, ow)
}

// gradTilesGo is WinogradGradTiles in Go.
func gradTilesGo(z []float32, zs int, src []float32, idx []int32, ow int) {
	for t, at := range idx {
		top := src[at:][:2]
		bottom := src[int(at)+ow:][:2]
		// tmp = A Ȳ (4×2), then tmp Aᵀ by rows.
		tmp := [4][2]float32{
			{top[0], top[1]},
			{top[0] + bottom[0], top[1] + bottom[1]},
			{top[0] - bottom[0], top[1] - bottom[1]},
			{-bottom[0], -bottom[1]},
		}
		for i := range 4 {
			r := &tmp[i]
			z[(4*i+0)*zs+t] = r[0]
			z[(4*i+1)*zs+t] = r[0] + r[1]
			z[(4*i+2)*zs+t] = r[0] - r[1]
			z[(4*i+3)*zs+t] = -r[1]
		}
	}
}

// WinogradInputTiles sets d[ξ·ds + t] to (B D_t Bᵀ)[ξ] in place, for the
// tiles t < n. d must hold 15·ds + n values.
func WinogradInputTiles(d []float32, ds, n int) {
	if UseAVX512 {
		winoInputTilesFloat32(d, ds, n)
		return
	}
	inputTilesGo(d, ds, n)
}

// inputTilesGo is WinogradInputTiles in Go.
func inputTilesGo(d []float32, ds, n int) {
	for at := range n {
		// tmp = B D (4×4), by columns, then tmp Bᵀ by rows.
		var tmp [4][4]float32
		for j := range 4 {
			d0, d1, d2, d3 := d[(0+j)*ds+at], d[(4+j)*ds+at], d[(8+j)*ds+at], d[(12+j)*ds+at]
			tmp[0][j] = d0
			tmp[1][j] = d1 - d2 + d3
			tmp[2][j] = d1 + d2 - d0
			tmp[3][j] = -d3
		}
		for i := range 4 {
			r := &tmp[i]
			d[(4*i+0)*ds+at] = r[0]
			d[(4*i+1)*ds+at] = r[1] - r[2] + r[3]
			d[(4*i+2)*ds+at] = r[1] + r[2] - r[0]
			d[(4*i+3)*ds+at] = -r[3]
		}
	}
}

// WinogradFold sets plane[p] to the sum over the four rows s of fold of
// d[fold[s·len(plane) + p]], skipping −1, in the rows' order, from +0
// (WinogradFoldTable). fold must hold 4·len(plane) entries, each −1 or an
// index of d.
func WinogradFold(plane, d []float32, fold []int32) {
	if UseAVX512 {
		winoFoldFloat32(plane, d, fold)
		return
	}
	foldTilesGo(plane, d, fold)
}

// foldTilesGo is WinogradFold in Go.
func foldTilesGo(plane, d []float32, fold []int32) {
	hw := len(plane)
	for p := range plane {
		var sum float32
		for s := range 4 {
			if at := fold[s*hw+p]; at >= 0 {
				sum += d[at]
			}
		}
		plane[p] = sum
	}
}

// WinogradFilterTiles sets each filter f < len(dw)/9 of dw (3×3) to Gᵀ M
// G, M_ξ being m[ξ·ms + f]. m must hold 15·ms + len(dw)/9 values.
func WinogradFilterTiles(dw, m []float32, ms int) {
	if UseAVX512 {
		winoFilterTilesFloat32(dw, m, ms)
		return
	}
	filterTilesGo(dw, m, ms)
}

// filterTilesGo is WinogradFilterTiles in Go.
func filterTilesGo(dw, m []float32, ms int) {
	for f := range len(dw) / 9 {
		// tmp = Gᵀ M (3×4), by columns.
		var tmp [3][4]float32
		for j := range 4 {
			m0, m1, m2, m3 := m[(0+j)*ms+f], m[(4+j)*ms+f], m[(8+j)*ms+f], m[(12+j)*ms+f]
			tmp[0][j] = m0 + (m1+m2)*0.5
			tmp[1][j] = (m1 - m2) * 0.5
			tmp[2][j] = (m1+m2)*0.5 + m3
		}
		k := dw[f*9 : f*9+9]
		for i := range 3 {
			r := &tmp[i]
			k[3*i+0] = r[0] + (r[1]+r[2])*0.5
			k[3*i+1] = (r[1] - r[2]) * 0.5
			k[3*i+2] = (r[1]+r[2])*0.5 + r[3]
		}
	}
}

// WinogradTileIndex lists, for each 2×2 tile t of n images of oh × ow
// outputs (oh and ow even), the offset of its top left entry in a
// channel's row of the output gradient (the images' positions one after
// another): WinogradGradTiles' idx.
func WinogradTileIndex(n, oh, ow int) []int32 {
	th, tw := oh/2, ow/2
	idx := make([]int32, 0, n*th*tw)
	for i := range n {
		for ty := range th {
			for tx := range tw {
				idx = append(idx, int32(i*oh*ow+2*ty*ow+2*tx))
			}
		}
	}
	return idx
}

// WinogradFoldTable lists, for each input position of an h × w plane
// (padding 1, oh × ow outputs), the offsets (ξ·ds + the tile's index
// within its image) of the at most four transformed window entries that
// fall on it, in four rows of h·w entries, the tiles in row-major order
// and −1 for none: the order in which adding the windows one tile after
// another would add them. It is WinogradFold's fold for transforms ds
// apart.
func WinogradFoldTable(h, w, oh, ow, ds int) []int32 {
	th, tw, hw := oh/2, ow/2, h*w
	table := make([]int32, 4*hw)
	for i := range table {
		table[i] = -1
	}
	for r := range h {
		for q := range w {
			slot := 0
			for ty := range th {
				i := r - (2*ty - 1)
				if i < 0 || i >= 4 {
					continue
				}
				for tx := range tw {
					j := q - (2*tx - 1)
					if j < 0 || j >= 4 {
						continue
					}
					table[slot*hw+r*w+q] = int32((4*i+j)*ds + ty*tw + tx)
					slot++
				}
			}
		}
	}
	return table
}
