//go:build !amd64 || purego

package ops

func addRunsFloat32(plane, src []float32, runs []tapRun) { addRunsGo(plane, src, runs) }

func copyRunsFloat32(dst, plane []float32, runs []tapRun) {
	for _, r := range runs {
		copy(dst[r.pos:r.pos+r.n], plane[r.at:r.at+r.n])
	}
}

func addRunsClearingFloat32(plane, src []float32, runs []tapRun) {
	addRunsGo(plane, src, runs)
	for _, r := range runs {
		clear(src[r.pos : r.pos+r.n])
	}
}
