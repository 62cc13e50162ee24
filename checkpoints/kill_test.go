package checkpoints

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// writerEnv makes the test binary, started by TestKillWhileWriting, a
// process that saves checkpoints in a loop until it is killed.
const writerEnv = "MTSGD_CHECKPOINT_WRITER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(writerEnv); dir != "" {
		c := sample()
		big := make([]float64, 1<<18) // 2 MB per file: writes take a while
		for i := range c.Particles {
			c.Particles[i].TrunkOpt = big
		}
		for epoch := 1; ; epoch++ {
			c.Epoch = epoch
			c.Particles[0].Trunk[0] = float64(epoch)
			big[0] = float64(epoch)
			if err := Save(dir, c); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
	os.Exit(m.Run())
}

// Killing a process with SIGKILL while it saves, at many points, never
// leaves the checkpoint unreadable: it is always a whole earlier or later
// checkpoint, its parameters those of the epoch its manifest names.
func TestKillWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	dir := filepath.Join(t.TempDir(), "last")
	last := 0
	for round := range 16 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill points spread over the first save and well into the loop.
		time.Sleep(time.Duration(round*15+5) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		c, err := Load(dir)
		if last == 0 && errors.Is(err, os.ErrNotExist) {
			continue // killed before the first manifest: nothing to read yet
		}
		if err != nil {
			t.Fatalf("round %d: checkpoint unreadable after SIGKILL: %v", round, err)
		}
		if c.Particles[0].Trunk[0] != float64(c.Epoch) || c.Particles[0].TrunkOpt[0] != float64(c.Epoch) {
			t.Fatalf("round %d: manifest says epoch %d, files hold %v and %v", round, c.Epoch, c.Particles[0].Trunk[0], c.Particles[0].TrunkOpt[0])
		}
		t.Logf("round %d: killed at epoch %d", round, c.Epoch)
		last = max(last, c.Epoch)
	}
	if last < 2 {
		t.Errorf("the writer never got past its first save (epoch %d): the test killed nothing mid-loop", last)
	}
}
