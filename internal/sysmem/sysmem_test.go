package sysmem

import (
	"errors"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"1000", 1000}, {"24G", 24 << 30}, {"24GiB", 24 << 30}, {"512mb", 512 << 20}, {" 1.5T ", 1.5 * (1 << 40)}, {"8K", 8192},
	} {
		if got, err := ParseBytes(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "G", "-1G", "0", "lots", "1e400", "NaN", "12X"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

func TestMemTotal(t *testing.T) {
	if n, ok := memTotal("testdata/meminfo"); !ok || n != 24684092*1024 {
		t.Errorf("meminfo: %v, %v", n, ok)
	}
	for _, path := range []string{"testdata/meminfo-without-total", "testdata/missing"} {
		if _, ok := memTotal(path); ok {
			t.Errorf("%s: a total", path)
		}
	}
}

// $MTSGD_MEMORY replaces the machine's figure; a bad value does not.
func TestTotalFromEnv(t *testing.T) {
	t.Setenv(Env, "3G")
	if n, src := Total(); n != 3<<30 || src != "$"+Env {
		t.Errorf("Total() = %v, %q", n, src)
	}
	t.Setenv(Env, "plenty")
	if n, src := Total(); n <= 0 || src == "$"+Env {
		t.Errorf("with a bad $%s: Total() = %v, %q", Env, n, src)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		b    float64
		want string
	}{{1, "1 MiB"}, {300 << 20, "300 MiB"}, {24 << 30, "24.0 GiB"}, {3 << 40, "3 TiB"}} {
		if got := Format(tc.b); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	parts := []Part{
		{"particle vectors", "-particles 100000", 38 << 30, ""},
		{"kernel matrices", "-particles 100000", 160 << 30, ""},
		{"graphs", "-batch 256", 2.5 * (1 << 30), ""},
		{"evaluation", "-particles 100000", 1 << 20, ""}, // under 1%: left out of the list
	}
	err := check(parts, 24<<30, "MemTotal in /proc/meminfo")
	want := "not enough memory: -particles 100000: the run needs at least 200.5 GiB (kernel matrices 160.0 GiB, particle vectors 38.0 GiB, graphs 2.5 GiB), " +
		"more than the 24.0 GiB this machine has (MemTotal in /proc/meminfo); lower -particles"
	if !errors.Is(err, ErrTooBig) || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	if err := check(parts[2:], 24<<30, "x"); err != nil {
		t.Errorf("a run that fits: %v", err)
	}
	if err := check([]Part{{"graphs", "-batch 1", 1e300, ""}}, 24<<30, "x"); err == nil || !strings.Contains(err.Error(), "9.09e+287 TiB") {
		t.Errorf("absurd size: %v", err)
	}
	// A part whose setting is not a flag says what to lower.
	err = check([]Part{{"particle vectors", "tasks.json: classes 2000000000 (task t) with -particles 2", 1e13, "classes in tasks.json, or -particles"}}, 24<<30, "x")
	if want := "tasks.json: classes 2000000000 (task t) with -particles 2: the run needs at least 9.09 TiB (particle vectors 9.09 TiB), " +
		"more than the 24.0 GiB this machine has (x); lower classes in tasks.json, or -particles"; err == nil || err.Error() != "not enough memory: "+want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}
