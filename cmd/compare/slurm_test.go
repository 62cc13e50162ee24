package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	log "github.com/sirupsen/logrus"

	"github.com/mtsgd/mtsgd/experiment"
	"github.com/mtsgd/mtsgd/internal/testenv"
)

// SlurmTestEnv set to 1 makes TestSlurm fail, rather than skip, where
// Slurm or munge is missing (CI sets it, .ci/run installs them).
const SlurmTestEnv = "MTSGD_SLURM_TEST"

// A sweep on a real Slurm: a one-node cluster on this machine (munged,
// slurmctld and slurmd of Debian's slurm-wlm, run by the test as its
// children with a configuration of its own in a temporary directory)
// runs compare -slurm -submit's job array of 4 cells; once squeue no
// longer lists the job, compare -aggregate ends with status 0 and its
// tables equal those of the same comparison run in one process, but for
// the seconds.
func TestSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks on real data under Slurm")
	}
	required := os.Getenv(SlurmTestEnv) == "1"
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if required {
			t.Fatalf("%s (%s=1: Slurm is required)", msg, SlurmTestEnv)
		}
		t.Skipf("%s; install Debian's slurm-wlm and munge, as root, to run it", msg)
	}
	bins := map[string]string{}
	for _, name := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel"} {
		path, err := lookSbin(name)
		if err != nil {
			unavailable("%s not found", name)
		}
		bins[name] = path
	}
	if os.Geteuid() != 0 {
		unavailable("the test cluster runs its daemons as root (SlurmUser=root)")
	}
	_, _, err := experiment.LoadData(experiment.Settings{Dataset: "multi-mnist", Seed: 1}, "")
	testenv.CheckData(t, err)
	log.SetOutput(&bytes.Buffer{})
	defer log.SetOutput(os.Stderr)

	start := time.Now()
	c := startCluster(t, bins)
	t.Logf("cluster up in %.1fs", time.Since(start).Seconds())

	out := filepath.Join(c.dir, "sweep")
	cmd, err := compareCmd(append(sweepArgs("1"), "-slurm", "-submit", "-slurm-cpus", "1", "-slurm-mem", "500M",
		"-slurm-time", "10", "-slurm-partition", "debug", "-out", out)...)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "SLURM_CONF="+c.conf, "PATH="+filepath.Dir(bins["sbatch"])+":"+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("compare -slurm -submit: %v\n%s%s", err, stdout, stderr.String())
	}
	lines := strings.Fields(string(stdout))
	job := lines[len(lines)-1]
	if _, err := strconv.ParseUint(job, 10, 64); err != nil {
		t.Fatalf("compare -slurm -submit printed no job id:\n%s", stdout)
	}
	c.job = job
	t.Logf("job %s submitted", job)

	c.wait(t, job, out)
	t.Logf("job %s done %.1fs after the cluster started", job, time.Since(start).Seconds())

	agg, err := compareCmd("-aggregate", "-out", out)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := agg.CombinedOutput(); err != nil {
		c.dumpLogs(t, out)
		t.Fatalf("compare -aggregate: %v\n%s", err, b)
	}
	gotCSV, gotMD := tables(t, out)
	if n := strings.Count(gotCSV, "\n"); n != 1+2*2 {
		t.Errorf("compare.csv has %d lines, want a header and 4 rows:\n%s", n, gotCSV)
	}

	whole := filepath.Join(c.dir, "whole")
	o, err := parseFlags(append(sweepArgs("1"), "-out", whole), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	wantCSV, wantMD := tables(t, whole)
	if gotCSV != wantCSV || gotMD != wantMD {
		t.Errorf("under Slurm:\n%s\n%s\nin one process:\n%s\n%s", gotCSV, gotMD, wantCSV, wantMD)
	}
	logs, _ := filepath.Glob(filepath.Join(out, LogDir, job+"_*.out"))
	if len(logs) != 4 {
		t.Errorf("array task logs %q, want 4", logs)
	}

	// The tuned protocol: the search array first, the final cells in a
	// second array that waits for it; every cell finishes.
	tuned := filepath.Join(c.dir, "tuned")
	cmd, err = compareCmd(append(tunedArgs(tuned), "-slurm", "-submit", "-slurm-cpus", "1", "-slurm-mem", "500M",
		"-slurm-time", "10", "-slurm-partition", "debug")...)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "SLURM_CONF="+c.conf, "PATH="+filepath.Dir(bins["sbatch"])+":"+os.Getenv("PATH"))
	stderr.Reset()
	cmd.Stderr = &stderr
	if stdout, err = cmd.Output(); err != nil {
		t.Fatalf("compare -protocol tuned -slurm -submit: %v\n%s%s", err, stdout, stderr.String())
	}
	// One array for the search's grid, one for the rate above it, one for
	// the final runs: three job ids, printed last.
	jobs := strings.Fields(string(stdout))
	jobs = jobs[max(0, len(jobs)-3):]
	for _, j := range jobs {
		if _, err := strconv.ParseUint(j, 10, 64); err != nil || len(jobs) != 3 {
			t.Fatalf("compare -protocol tuned -slurm -submit printed %q, not three job ids last", stdout)
		}
	}
	c.job = jobs[2]
	c.wait(t, strings.Join(jobs, ","), tuned)
	agg, err = compareCmd("-aggregate", "-out", tuned)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := agg.CombinedOutput(); err != nil {
		c.dumpLogs(t, tuned)
		t.Fatalf("compare -aggregate of the tuned sweep: %v\n%s", err, b)
	}
}

// lookSbin finds a program on PATH or in the sbin folders, where Debian
// puts the daemons and a user's PATH may not reach.
func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// cluster is a one-node Slurm on this machine, the test's.
type cluster struct {
	dir, conf string
	bins      map[string]string
	job       string // the submitted job, cancelled at cleanup if still there
}

// command runs a Slurm client against the cluster.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(c.bins[name], args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	return cmd
}

// startCluster starts munged, slurmctld and slurmd with a configuration
// in a temporary directory, and waits until the node is idle. Cleanup
// cancels the job, stops the daemons and removes the directory, whatever
// the test did.
func startCluster(t *testing.T, bins map[string]string) *cluster {
	// Not t.TempDir: munge's socket path must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "mtsgd-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{dir: dir, conf: filepath.Join(dir, "slurm.conf"), bins: bins}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	for _, sub := range []string{"munge", "state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "munge", "munge.key")
	if err := os.WriteFile(keyFile, key, 0o400); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "munge", "munge.socket")
	c.daemon(t, "munged", "--foreground", "--force", "--key-file="+keyFile, "--socket="+socket,
		"--pid-file="+filepath.Join(dir, "munge", "munged.pid"), "--log-file="+filepath.Join(dir, "log", "munged.log"),
		"--seed-file="+filepath.Join(dir, "munge", "munged.seed"))
	waitFor(t, 10*time.Second, "munged's socket", func() bool { _, err := os.Stat(socket); return err == nil })

	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	mem := memTotalMB(t) / 2
	conf := fmt.Sprintf(`ClusterName=mtsgdtest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[4]s
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/log/slurmctld.log
SlurmdLogFile=%[5]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=600
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=2 RealMemory=%[6]d State=UNKNOWN
PartitionName=debug Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, freePort(t), freePort(t), socket, dir, mem)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.daemon(t, "slurmctld", "-D", "-c", "-f", c.conf)
	c.daemon(t, "slurmd", "-D", "-f", c.conf, "-N", host)
	t.Cleanup(func() {
		if c.job == "" {
			return
		}
		// Cancel what is left of the job before slurmd goes, so that no
		// cell outlives the test.
		c.command("scancel", c.job).Run()
		waitFor(nil, 30*time.Second, "", func() bool {
			q, err := c.command("squeue", "-h", "-j", c.job).Output()
			return err != nil || strings.TrimSpace(string(q)) == ""
		})
	})
	ok := waitFor(nil, 60*time.Second, "", func() bool {
		b, err := c.command("sinfo", "-h", "-N", "-o", "%t").Output()
		return err == nil && strings.TrimSpace(string(b)) == "idle"
	})
	if !ok {
		b, _ := c.command("sinfo", "-N", "-l").CombinedOutput()
		c.dumpLogs(t, "")
		t.Fatalf("the node is not idle after 60s:\n%s", b)
	}
	return c
}

// daemon starts a daemon in the foreground as the test's child, and stops
// it (SIGTERM, then SIGKILL) at cleanup.
func (c *cluster) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(c.bins[name], args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	f, err := os.Create(filepath.Join(c.dir, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); f.Close() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	select {
	case err := <-done:
		b, _ := os.ReadFile(f.Name())
		t.Fatalf("%s ended at once: %v\n%s", name, err, b)
	case <-time.After(200 * time.Millisecond):
	}
}

// dumpLogs logs the daemons' logs and the array tasks' output.
// wait returns once squeue no longer lists the jobs (a comma-separated
// list of ids): an array is listed until its last task ends. It fails
// the test, with the logs, after 5 minutes.
func (c *cluster) wait(t *testing.T, jobs, out string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		q, err := c.command("squeue", "-h", "-j", jobs, "-o", "%i %T").CombinedOutput()
		if err != nil && !strings.Contains(string(q), "Invalid job id") {
			t.Fatalf("squeue: %v\n%s", err, q)
		}
		if strings.TrimSpace(string(q)) == "" || err != nil {
			return
		}
		if time.Now().After(deadline) {
			c.dumpLogs(t, out)
			t.Fatalf("jobs %s still queued after 5 minutes:\n%s", jobs, q)
		}
		time.Sleep(time.Second)
	}
}

func (c *cluster) dumpLogs(t *testing.T, out string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.dir, "log", "*"))
	if out != "" {
		tasks, _ := filepath.Glob(filepath.Join(out, LogDir, "*"))
		files = append(files, tasks...)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("%s:\n%s", f, b)
	}
}

// waitFor polls cond every 100 ms until it holds or timeout passes, and
// says whether it held; with t, it fails the test naming what.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) bool {
	end := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(end) {
			if t != nil {
				t.Fatalf("no %s after %v", what, timeout)
			}
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// freePort is a TCP port free on this machine a moment ago.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// memTotalMB is the machine's memory in megabytes.
func memTotalMB(t *testing.T) int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err == nil {
				return kb / 1024
			}
		}
	}
	t.Fatal(errors.New("/proc/meminfo: no MemTotal"))
	return 0
}
