package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/mtsgd/mtsgd/data"
	_ "github.com/mtsgd/mtsgd/internal/openblas" // the BLAS of the README's build, with -tags openblas
	"github.com/mtsgd/mtsgd/models/resnet18"
	"github.com/mtsgd/mtsgd/optim"
	"github.com/mtsgd/mtsgd/particles"
)

// BenchmarkStep measures one full training step as cmd/train runs it: 5
// LeNet particles, batch 256, two tasks, float32 graphs, every graph run on
// GOMAXPROCS workers, the MT-SGD trunk update and the SVGD head updates
// included. Side by side, it runs the PyTorch peer
// bench/peers/torch_lenet_step.py with 5 particles and 2 threads (one
// multi-task LeNet step per particle with the two trunk gradients computed
// separately): each iteration is one round of the peer (its median over
// 10 steps) and then 10 of our steps, each timed; it reports our median
// step, the median of the peer's rounds and their ratio. With the build
// of the README's main command (OpenBLAS), five rounds:
//
//	go test -tags openblas ./engine -run '^$' -bench '^BenchmarkStep$' -benchtime 5x -benchmem
//
// The peer's peak RSS is the process's first round's, run before any
// ensemble exists (the testing package calls a benchmark more than once):
// Linux carries a process's peak RSS over into the program it
// starts, which would inflate later rounds' figure. The peer needs
// /usr/bin/python3 with torch (Debian: apt-get install python3-torch);
// without it only our figures are reported.
func BenchmarkStep(b *testing.B) {
	const m, batch, steps = 5, 256, 10
	var torchMS []float64
	var torchErr error
	peer := func() {
		if torchErr != nil {
			return
		}
		ms, rss, err := runTorchPeer("torch_lenet_step.py", m, 2, steps)
		if err != nil {
			torchErr = err
			return
		}
		torchFirstRSS.once.Do(func() { torchFirstRSS.mb = rss })
		torchMS = append(torchMS, ms)
	}
	peer()
	e, data, u := lenetStep(b, m, batch)
	var ours []float64
	b.ResetTimer()
	for i := range b.N {
		if i > 0 {
			b.StopTimer()
			peer()
			b.StartTimer()
		}
		for range steps {
			start := time.Now()
			if _, err := e.Step(data, u); err != nil {
				b.Fatal(err)
			}
			ours = append(ours, float64(time.Since(start).Microseconds())/1000)
		}
	}
	b.StopTimer()
	b.ReportMetric(median(ours), "ms/step")
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
	if torchErr != nil {
		b.Logf("PyTorch peer not run: %v", torchErr)
		return
	}
	b.ReportMetric(median(torchMS), "torch-ms/step")
	b.ReportMetric(torchFirstRSS.mb, "torch-peak-RSS-MB")
	b.ReportMetric(median(ours)/median(torchMS), "×torch")
	b.Logf("ours: %d steps, median %.1f ms; peer: %d rounds of %d steps, medians %v ms", len(ours), median(ours), len(torchMS), steps, torchMS)
}

// BenchmarkStepBatch is BenchmarkStep's step without the peer at two
// batch sizes, so that -benchmem shows how much a step allocates and
// whether that grows with the batch:
//
//	go test -tags openblas ./engine -run '^$' -bench StepBatch -benchmem -benchtime 10x
func BenchmarkStepBatch(b *testing.B) {
	for _, batch := range []int{64, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			e, data, u := lenetStep(b, 5, batch)
			b.ReportAllocs()
			timeSteps(b, e, data, u)
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/step")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// lenetStep is the ensemble of BenchmarkStep (m LeNet particles, two
// tasks, float32, SGD), a random batch and the MT-SGD/SVGD update, after
// two steps that warm the allocator and the caches.
func lenetStep(b *testing.B, m, batch int) (*Trainer, *data.Batch, Update) {
	e, err := New(testConfig(batch, tensor.Float32), m, 1, sgd(0.01), runtime.GOMAXPROCS(0))
	if err != nil {
		b.Fatal(err)
	}
	u := mtsgdUpdate()
	data := randomBatch(rand.New(rand.NewPCG(1, 0)), batch, 2)
	for range 2 {
		if _, err := e.Step(data, u); err != nil {
			b.Fatal(err)
		}
	}
	return e, data, u
}

// mtsgdUpdate is cmd/train's default update: MT-SGD trunks, SVGD heads,
// kernel scale and repulsion 1.
func mtsgdUpdate() Update {
	kernel := particles.RBF{Scale: 1}
	return Update{Trunk: &particles.MTSGD{Kernel: kernel, Repulsion: 1}, Head: &particles.SVGD{Kernel: kernel, Repulsion: 1}}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// torchFirstRSS is the peer's peak RSS in its first run in this process.
var torchFirstRSS struct {
	once sync.Once
	mb   float64
}

var torchResultPattern = regexp.MustCompile(`median ([0-9.]+) ms/step.*peak RSS ([0-9.]+) MB`)

// runTorchPeer runs the PyTorch reference bench/peers/<script> with
// particles particles on threads threads for steps timed steps and
// returns its median milliseconds per step and its peak RSS, both from
// its RESULT line.
// sizes, if given, are the script's further arguments (its network's
// width, the image side, the batch).
func runTorchPeer(script string, particles, threads, steps int, sizes ...int) (ms, rssMB float64, err error) {
	script, err = findUp(filepath.Join("bench", "peers", script))
	if err != nil {
		return 0, 0, err
	}
	args := []string{script, strconv.Itoa(particles), strconv.Itoa(threads), strconv.Itoa(steps)}
	for _, s := range sizes {
		args = append(args, strconv.Itoa(s))
	}
	out, err := exec.Command("/usr/bin/python3", args...).CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v: %s", script, err, out)
	}
	sub := torchResultPattern.FindSubmatch(out)
	if sub == nil {
		return 0, 0, fmt.Errorf("%s printed no RESULT line: %s", script, out)
	}
	ms, _ = strconv.ParseFloat(string(sub[1]), 64)
	rssMB, _ = strconv.ParseFloat(string(sub[2]), 64)
	return ms, rssMB, nil
}

// findUp looks for rel in the working directory and its parents.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s not found in the working directory or its parents", rel)
		}
		dir = parent
	}
}

// peakRSSMB is this process's peak resident set size (Linux reports KiB).
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// BenchmarkResNetStep measures one full MT-SGD training step of the CelebA
// setup on this machine: 5 ResNet-18 particles (11.2M trunk parameters
// each), batch 64 of 3×64×64 images, the paper's 10 tasks, float32, the
// particles on GOMAXPROCS workers, kernel, QP, SVGD heads and Adam
// included, and compares it with the PyTorch peer
// bench/peers/torch_resnet_step.py: the same network in plain torch.nn,
// one forward per particle and the ten tasks' trunk gradients taken
// separately from it, the RBF kernel over the trunks, MT-SGD's K×K
// matrix, a Frank-Wolfe min-norm solve, SVGD heads and Adam(5e-4), on
// GOMAXPROCS threads. With the build of the README's main command
// (OpenBLAS):
//
//	go test -tags openblas ./engine -run '^$' -bench ResNetStep -benchtime 1x
//
// The peer runs first and alone, once per process (one round: one
// warm-up step and 2 timed steps), before any ensemble exists, so that
// neither competes with the other for the cores or the memory and its
// peak RSS is its own (see BenchmarkStep); then our ensemble is built,
// warmed by one step and timed. It reports our s/step and peak-RSS-MB
// (the benchmark process, ensemble included) and the peer's
// torch-s/step (its median step), torch-peak-RSS-MB (from its RESULT
// line) and ×torch, our step's time over the peer's. The peer needs
// /usr/bin/python3 with torch (Debian: apt-get install python3-torch);
// without it only our figures are reported.
func BenchmarkResNetStep(b *testing.B) {
	const m, batch, k = 5, 64, 10
	resnetPeer.once.Do(func() {
		ms, rss, err := runTorchPeer("torch_resnet_step.py", m, runtime.GOMAXPROCS(0), 2)
		resnetPeer.s, resnetPeer.rssMB, resnetPeer.err = ms/1000, rss, err
	})
	cfg, batchData := celebaStep(batch, k)
	resNetStep(b, cfg, batchData, m, &resnetPeer)
}

// BenchmarkPaperResNetStep is BenchmarkResNetStep on the paper's trunk
// (resnet18.Paper: 3×3 stem, no max-pool, 2,048 features; about 15 times
// the work of torchvision's layout at 64×64), against
// bench/peers/torch_paper_resnet_step.py, the same step in torch.nn on
// that trunk. paper is the paper's setup (5 particles, batch 64 of
// 3×64×64, 10 tasks; some 30 GB, see docs/performance.md); quick is the
// same code at width 8 on batch 16 (a 256th of the work), a smoke run:
//
//	go test -tags openblas ./engine -run '^$' -bench 'PaperResNetStep/quick' -benchtime 1x
func BenchmarkPaperResNetStep(b *testing.B) {
	const m, k = 5, 10
	for _, size := range []struct {
		name         string
		width, batch int
		peer         *peerRound
	}{{"quick", 8, 16, &paperPeers[0]}, {"paper", 64, 64, &paperPeers[1]}} {
		b.Run(size.name, func(b *testing.B) {
			size.peer.once.Do(func() {
				ms, rss, err := runTorchPeer("torch_paper_resnet_step.py", m, runtime.GOMAXPROCS(0), 2, size.width, resnet18.Side, size.batch)
				size.peer.s, size.peer.rssMB, size.peer.err = ms/1000, rss, err
			})
			classes := make([]int, k)
			for j := range classes {
				classes[j] = 2
			}
			cfg, batchData := celebaStep(size.batch, k)
			cfg.Model = resnet18.PaperSmall(size.width, resnet18.Side, classes...)
			resNetStep(b, cfg, batchData, m, size.peer)
		})
	}
}

// resNetStep times b.N MT-SGD steps of m particles of cfg on one batch,
// after one untimed step, and reports them beside the peer's round.
func resNetStep(b *testing.B, cfg *Config, batchData *data.Batch, m int, peer *peerRound) {
	e, err := New(cfg, m, 1, func() optim.Optimizer { return optim.NewAdam(5e-4) }, runtime.GOMAXPROCS(0))
	if err != nil {
		b.Fatal(err)
	}
	u := mtsgdUpdate()
	if _, err := e.Step(batchData, u); err != nil { // build the machines' buffers
		b.Fatal(err)
	}
	timeSteps(b, e, batchData, u)
	ours := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(ours, "s/step")
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
	if peer.err != nil {
		b.Logf("PyTorch peer not run: %v", peer.err)
		return
	}
	b.ReportMetric(peer.s, "torch-s/step")
	b.ReportMetric(peer.rssMB, "torch-peak-RSS-MB")
	b.ReportMetric(ours/peer.s, "×torch")
}

// celebaStep is the CelebA setup of the ResNet-18 benchmarks: k binary
// tasks, float32 graphs of batch examples of 3×64×64, and a random batch.
func celebaStep(batch, k int) (*Config, *data.Batch) {
	tasks := make([]data.Task, k)
	classes := make([]int, k)
	for j := range tasks {
		tasks[j] = data.Task{Name: fmt.Sprintf("attr%d", j), Kind: data.Classification, Classes: 2}
		classes[j] = 2
	}
	cfg := &Config{Model: resnet18.New(classes...), Tasks: tasks, Batch: batch, Dtype: tensor.Float32}
	rng := rand.New(rand.NewPCG(1, 0))
	in := &data.Batch{Inputs: make([]float32, batch*3*64*64), Targets: make([][]float32, k)}
	for i := range in.Inputs {
		in.Inputs[i] = rng.Float32()
	}
	for i := range batch {
		in.Index = append(in.Index, i)
		for j := range k {
			in.Targets[j] = append(in.Targets[j], float32(rng.IntN(2)))
		}
	}
	return cfg, in
}

// peerRound is a PyTorch peer's round: run once per process, before the
// first ensemble of its benchmark is built.
type peerRound struct {
	once  sync.Once
	s     float64 // median seconds per step
	rssMB float64
	err   error
}

// resnetPeer is BenchmarkResNetStep's round, paperPeers
// BenchmarkPaperResNetStep's per size.
var (
	resnetPeer peerRound
	paperPeers [2]peerRound
)

// timeSteps times b.N steps of e on one batch.
func timeSteps(b *testing.B, e *Trainer, batch *data.Batch, u Update) {
	b.ResetTimer()
	for range b.N {
		if _, err := e.Step(batch, u); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

// BenchmarkStepPreset times the LeNet step (5 particles, batch 256) of
// MT-SGD's authors-params preset (one gradient evaluation, kernels over
// the parameters) and of its authors preset (heads first, kernels over
// the features and outputs), the ratio:
//
//	go test -tags openblas ./engine -run '^$' -bench StepPreset -benchtime 5x
//
// Its "ratio" run alternates one step of each preset, b.N pairs, and
// reports each preset's median step and the ratio of the medians
// (authors/authors-params): a machine whose speed drifts between the
// two separate runs moves their ratio, not this one.
func BenchmarkStepPreset(b *testing.B) {
	update := func(preset string) Update {
		u := Update{
			Trunk: &particles.MTSGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 0.0015, FirstTermOnly: true},
			Head:  &particles.SVGD{Kernel: particles.RBF{Scale: 1}, Repulsion: 0.25},
			Scale: ScoreNormalized,
		}
		if preset == "authors" {
			u.Kernel, u.OutputKernel, u.HeadsFirst = KernelOutputs, particles.RBF{Scale: 1}, true
		}
		return u
	}
	presets := []string{"authors-params", "authors"}
	for _, preset := range presets {
		b.Run(preset, func(b *testing.B) {
			e, data, _ := lenetStep(b, 5, 256)
			timeSteps(b, e, data, update(preset))
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/step")
			b.ReportMetric(0, "ns/op")
		})
	}
	b.Run("ratio", func(b *testing.B) {
		var (
			trainers [2]*Trainer
			batches  [2]*data.Batch
			updates  [2]Update
			ms       [2][]float64
		)
		for i, preset := range presets {
			trainers[i], batches[i], _ = lenetStep(b, 5, 256)
			updates[i] = update(preset)
			if _, err := trainers[i].Step(batches[i], updates[i]); err != nil { // build the graphs
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for range b.N {
			for i := range presets {
				start := time.Now()
				if _, err := trainers[i].Step(batches[i], updates[i]); err != nil {
					b.Fatal(err)
				}
				ms[i] = append(ms[i], float64(time.Since(start).Microseconds())/1000)
			}
		}
		b.StopTimer()
		b.ReportMetric(median(ms[0]), "authors-params-ms/step")
		b.ReportMetric(median(ms[1]), "authors-ms/step")
		b.ReportMetric(median(ms[1])/median(ms[0]), "ratio")
		b.ReportMetric(0, "ns/op")
	})
}

// BenchmarkEvaluate times an evaluation of 5 LeNet particles (batch 256,
// float32) on 2,560 examples, as an epoch's validation and test
// evaluations run it, reporting examples per second:
//
//	go test -tags openblas ./engine -run '^$' -bench Evaluate -benchtime 5x
func BenchmarkEvaluate(b *testing.B) {
	e, _, _ := lenetStep(b, 5, 256)
	d := memory{randomBatch(rand.New(rand.NewPCG(40, 0)), 2560, 2)}
	if _, err := e.Evaluate(context.Background(), d); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := e.Evaluate(context.Background(), d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(d.Len()*b.N)/b.Elapsed().Seconds(), "examples/s")
}
