package testenv

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// childEnv names the test that a child process of the test binary runs
// (InChild).
const childEnv = "MTSGD_TEST_CHILD"

// InChild runs the calling test again, alone, in a child process of the
// test binary, and reports whether the caller is that child: a test that
// changes what the whole process may do (a file-size limit, to fail
// writes as a full disk does) does it there. The limit would otherwise
// also meet the writes of go test's own log of the package's file
// accesses (kept for its cache), which grows with every test and fails
// the package when a write past the limit is refused. The parent fails
// the test with the child's output where the child failed, or where the
// test did not run there.
//
//	if !testenv.InChild(t) {
//		return
//	}
func InChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	var levels []string
	for _, name := range strings.Split(t.Name(), "/") {
		levels = append(levels, "^"+regexp.QuoteMeta(name)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(levels, "/"), "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a child process: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) && !strings.Contains(string(out), "--- PASS: "+lastLevel(t.Name())) {
		t.Fatalf("%s did not run in its child process:\n%s", t.Name(), out)
	}
	return false
}

// lastLevel is a subtest's own name, as -test.v prints it indented under
// its parent.
func lastLevel(name string) string {
	return name[strings.LastIndex(name, "/")+1:]
}
