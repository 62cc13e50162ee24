//go:build unix && !solaris && !aix

package runlock

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// holderEnv makes the test binary a process that locks the directory it
// names, says "locked", and holds the lock until its stdin closes.
const holderEnv = "MTSGD_RUNLOCK_HOLD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(holderEnv); dir != "" {
		if _, err := Acquire(dir); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// While another process holds a directory, Acquire fails at once naming
// it by PID; once the holder ends, by exiting or killed, the kernel has
// released the lock and Acquire succeeds, recording the new holder's PID.
func TestSecondProcessRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(*exec.Cmd, io.Closer)
	}{
		{"holder exits", func(_ *exec.Cmd, stdin io.Closer) { stdin.Close() }},
		{"holder killed", func(cmd *exec.Cmd, _ io.Closer) { cmd.Process.Signal(syscall.SIGKILL) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), holderEnv+"="+dir)
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
				cmd.Wait()
				t.Fatalf("holder said %q", line)
			}

			_, err = Acquire(dir)
			pid := strconv.Itoa(cmd.Process.Pid)
			if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "process "+pid) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("second holder: error %v, want ErrHeld naming process %s and %s", err, pid, dir)
			}

			tc.end(cmd, stdin)
			cmd.Wait()
			l, err := Acquire(dir)
			if err != nil {
				t.Fatalf("after the holder ended: %v", err)
			}
			defer l.Release()
			if b, _ := os.ReadFile(filepath.Join(dir, Name)); string(b) != strconv.Itoa(os.Getpid())+"\n" {
				t.Errorf("lock file holds %q, want this process's PID", b)
			}
		})
	}
}

// Within one process too a second Acquire is refused until Release.
func TestReleaseAndReacquire(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second Acquire: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	l.Release()
}

func TestMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	if _, err := Acquire(dir); err == nil || errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), dir) {
		t.Errorf("error %v, want one naming %s", err, dir)
	}
}

// Hold's lock excludes another open of the lock file (flock locks belong
// to open file descriptions, so this holds within one process too) until
// its release function runs.
func TestHoldReleases(t *testing.T) {
	if !Exclusive {
		t.Skip("no flock here")
	}
	dir := t.TempDir()
	release, err := Hold(dir, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrHeld) {
		t.Fatalf("second lock while held: %v, want ErrHeld", err)
	}
	release()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l.Release()
}

// Holder sees a held directory and its holder's PID, and neither takes
// the lock (Acquire still succeeds once it is released) nor creates the
// lock file where there is none.
func TestHolder(t *testing.T) {
	dir := t.TempDir()
	if pid, held := Holder(dir); held || pid != 0 {
		t.Errorf("no lock file: %d, %v", pid, held)
	}
	if _, err := os.Stat(filepath.Join(dir, Name)); err == nil {
		t.Error("Holder created the lock file")
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pid, held := Holder(dir); !held || pid != os.Getpid() {
		t.Errorf("held: %d, %v; want %d, true", pid, held, os.Getpid())
	}
	l.Release()
	if pid, held := Holder(dir); held {
		t.Errorf("released: %d, %v", pid, held)
	}
	if l, err = Acquire(dir); err != nil {
		t.Fatalf("Acquire after Holder: %v", err)
	}
	l.Release()
}
