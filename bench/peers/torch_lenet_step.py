"""PyTorch peer of BenchmarkStep (engine/bench_test.go).

One training step of M multi-task LeNets, as our MT-SGD step needs
it: the trunk's gradient is taken separately for each of the two tasks
(two autograd passes over one forward), then every parameter takes a plain
SGD step. Run with Debian's python3-torch:

    /usr/bin/python3 bench/peers/torch_lenet_step.py [particles] [threads] [steps]

It prints one line the benchmark parses:
    RESULT ... median X ms/step ... peak RSS Y MB

PEER_DEVICE=cuda runs the step on the GPU (a CUDA build of PyTorch), the
clock read after torch.cuda.synchronize().
"""
import os
import resource
import statistics
import sys
import time

import torch
from torch import nn
from torch.nn import functional as F

BATCH, SIDE, CLASSES, WARMUP = 256, 36, 10, 3
DEVICE = torch.device(os.environ.get("PEER_DEVICE", "cpu"))


def arg(i, default):
    return int(sys.argv[i]) if len(sys.argv) > i else default


class LeNet(nn.Module):
    """The paper's LeNet: conv 1→10 (9×9), pool, conv 10→20 (5×5), pool, fc 500→50, two heads 50→10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, 9)
        self.conv2 = nn.Conv2d(10, 20, 5)
        self.fc = nn.Linear(500, 50)
        self.heads = nn.ModuleList([nn.Linear(50, CLASSES) for _ in range(2)])

    def trunk_params(self):
        return [*self.conv1.parameters(), *self.conv2.parameters(), *self.fc.parameters()]

    def features(self, x):
        h = F.max_pool2d(F.relu(self.conv1(x)), 2)
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        return F.relu(self.fc(torch.flatten(h, 1)))


def train_step(net, x, targets, lr=0.01):
    feats = net.features(x)
    trunk = net.trunk_params()
    updates = []
    for task, (head, y) in enumerate(zip(net.heads, targets)):
        loss = F.cross_entropy(head(feats), y)
        params = trunk + list(head.parameters())
        # Keep the forward graph for the next task's pass.
        grads = torch.autograd.grad(loss, params, retain_graph=task + 1 < len(targets))
        updates.append((params, grads))
    with torch.no_grad():
        for params, grads in updates:
            for p, g in zip(params, grads):
                p.add_(g, alpha=-lr)


def sync():
    """Waits for the GPU's queued work, so that the clock reads the step's time."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def main():
    particles, threads, steps = arg(1, 5), arg(2, 2), arg(3, 10)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    nets = [LeNet().to(DEVICE) for _ in range(particles)]
    data = [
        (torch.rand(BATCH, 1, SIDE, SIDE).to(DEVICE), [torch.randint(0, CLASSES, (BATCH,)).to(DEVICE) for _ in range(2)])
        for _ in range(4)
    ]
    times = []
    for s in range(WARMUP + steps):
        x, targets = data[s % len(data)]
        sync()
        start = time.perf_counter()
        for net in nets:
            train_step(net, x, targets)
        sync()
        if s >= WARMUP:
            times.append(1000 * (time.perf_counter() - start))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"RESULT torch {torch.__version__} device={DEVICE} particles={particles} threads={threads}: "
        f"median {statistics.median(times):.1f} ms/step over {len(times)} steps "
        f"(min {min(times):.1f}, max {max(times):.1f}); peak RSS {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
