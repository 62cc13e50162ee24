//go:build !linux

package sysmem

// sysinfo has no figure outside Linux: Total falls back to Fallback.
func sysinfo() (float64, bool) { return 0, false }
