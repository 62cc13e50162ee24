package checkpoints

import (
	"bufio"
	"fmt"
	"io"
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
			fmt.Println("saved", epoch)
		}
	}
	os.Exit(m.Run())
}

// Killing a process with SIGKILL while it saves, at many points, never
// leaves the checkpoint unreadable: it is always a whole earlier or later
// checkpoint, its parameters those of the epoch its manifest names. Each
// round waits for the writer's second save to finish, then kills it a
// growing fraction of one save's duration later, so the kill points sweep
// across a save whatever the machine's speed.
func TestKillWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	dir := filepath.Join(t.TempDir(), "last")
	const rounds = 16
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		var times []time.Time
		for len(times) < 3 && lines.Scan() {
			times = append(times, time.Now())
		}
		if len(times) < 3 {
			cmd.Wait()
			t.Fatalf("round %d: the writer stopped after %d saves", round, len(times))
		}
		save := times[2].Sub(times[1])
		time.Sleep(save * time.Duration(round) / rounds)
		cmd.Process.Signal(syscall.SIGKILL)
		go io.Copy(io.Discard, stdout)
		cmd.Wait()
		c, err := Load(dir)
		if err != nil {
			t.Fatalf("round %d: checkpoint unreadable after SIGKILL: %v", round, err)
		}
		if c.Epoch < 3 || c.Particles[0].Trunk[0] != float64(c.Epoch) || c.Particles[0].TrunkOpt[0] != float64(c.Epoch) {
			t.Fatalf("round %d: manifest says epoch %d, files hold %v and %v", round, c.Epoch, c.Particles[0].Trunk[0], c.Particles[0].TrunkOpt[0])
		}
	}
}
