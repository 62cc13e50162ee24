// Package sysmem says how much memory this machine has, and refuses an
// estimate of what a run needs that does not fit: a run that asks for
// more dies with Go's fatal out-of-memory error, which no caller can
// catch or report, so the commands check first (cmd/train, cmd/compare,
// and the checkpoint reader).
//
// The figure is MemTotal from /proc/meminfo, lowered to the cgroup's
// memory limit where one is set (containers); else the kernel's sysinfo;
// else Fallback. $MTSGD_MEMORY replaces it.
package sysmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Env names the environment variable that, when set, is taken as the
// machine's memory: bytes, or a number followed by K, M, G or T (powers of
// 1024), e.g. 24G.
const Env = "MTSGD_MEMORY"

// Fallback is the memory assumed where the system does not say how much
// it has: enough for the paper's runs, and far below what the absurd
// sizes this package exists for ask.
const Fallback = 16 << 30

// ErrTooBig is wrapped by Check's error.
var ErrTooBig = errors.New("not enough memory")

// CheckEnv refuses a $MTSGD_MEMORY that is set but not a size, which
// Total would ignore: commands call it as they read their flags.
func CheckEnv() error {
	v := os.Getenv(Env)
	if v == "" {
		return nil
	}
	if _, err := ParseBytes(v); err != nil {
		return fmt.Errorf("$%s %q: not a size such as 24G (bytes, or a number followed by K, M, G or T)", Env, v)
	}
	return nil
}

// Total returns the bytes of memory this process may use and where the
// figure comes from.
func Total() (float64, string) {
	if v := os.Getenv(Env); v != "" {
		if n, err := ParseBytes(v); err == nil {
			return n, "$" + Env
		}
		// A bad value must not silently lift the check: fall through to
		// the machine's figure.
	}
	total, source := 0.0, ""
	if n, ok := memTotal("/proc/meminfo"); ok {
		total, source = n, "MemTotal in /proc/meminfo"
	} else if n, ok := sysinfo(); ok {
		total, source = n, "sysinfo(2)"
	} else {
		return Fallback, "assumed: the system does not say"
	}
	for _, path := range cgroupLimits {
		if n, ok := cgroupLimit(path); ok && n < total {
			total, source = n, path
		}
	}
	return total, source
}

// cgroupLimits are the memory limits of the process's cgroup as a
// container sees it (v2, then v1).
var cgroupLimits = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memTotal reads MemTotal (kB) from a meminfo file.
func memTotal(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil || kb == 0 {
				return 0, false
			}
			return float64(kb) * 1024, true
		}
	}
	return 0, false
}

// cgroupLimit reads a cgroup memory limit: a number of bytes, or "max"
// (none).
func cgroupLimit(path string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return float64(n), true
}

// ParseBytes reads a byte count: digits, optionally followed by K, M, G
// or T (powers of 1024, an optional B or iB after them).
func ParseBytes(s string) (float64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := 1.0
	if i := strings.IndexAny(t, "KMGT"); i >= 0 && i == len(t)-1 {
		mult = math.Pow(1024, float64(strings.IndexByte("KMGT", t[i])+1))
		t = t[:i]
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || !(n > 0) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q is not a positive number of bytes (e.g. 24G)", s)
	}
	return n * mult, nil
}

// Part is one use of memory in an estimate.
type Part struct {
	What    string  // e.g. "kernel matrices"
	Setting string  // the flag and value that set its size, e.g. "-particles 100000"
	Bytes   float64 // float64: estimates of absurd sizes must not overflow
	// Lower is what the message tells to lower; "": the flag of Setting.
	Lower string
}

// Check returns nil if the parts fit in the machine's memory (Total).
// Otherwise its error wraps ErrTooBig and names the setting of the
// largest part, the estimate with its largest parts, and the memory.
func Check(parts []Part) error {
	total, source := Total()
	return check(parts, total, source)
}

func check(parts []Part, total float64, source string) error {
	need := 0.0
	for _, p := range parts {
		need += p.Bytes
	}
	if need <= total {
		return nil
	}
	sorted := slices.Clone(parts)
	slices.SortStableFunc(sorted, func(a, b Part) int { return -cmpFloat(a.Bytes, b.Bytes) })
	var list []string
	for _, p := range sorted {
		if p.Bytes >= need/100 {
			list = append(list, p.What+" "+Format(p.Bytes))
		}
	}
	lower := sorted[0].Lower
	if lower == "" {
		lower = flagOf(sorted[0].Setting)
	}
	return fmt.Errorf("%w: %s: the run needs at least %s (%s), more than the %s this machine has (%s); lower %s",
		ErrTooBig, sorted[0].Setting, Format(need), strings.Join(list, ", "), Format(total), source, lower)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// flagOf is the flag of a setting such as "-batch 100000".
func flagOf(setting string) string {
	flag, _, _ := strings.Cut(setting, " ")
	return flag
}

// Format writes a byte count for people, in powers of 1024 as
// ParseBytes reads them.
func Format(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.3g TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", math.Ceil(b/(1<<20)))
}
