package sysmem

import "syscall"

// sysinfo is the kernel's figure of the machine's memory.
func sysinfo() (float64, bool) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 0, false
	}
	return float64(si.Totalram) * float64(si.Unit), true
}
