"""PyTorch peer of BenchmarkResNetStep (engine/bench_test.go).

One MT-SGD training step of the CelebA setup on CPU: M multi-task
ResNet-18s (the trunk of models/resnet18, written out here in plain
torch.nn, no torchvision), batch 64 of 3×64×64, 10 binary tasks, float32.
Per particle: one forward pass in training mode (batch-norm batch
statistics, running statistics moved once), then each task's gradient
with respect to the trunk and its head taken separately (ten autograd
passes over that one forward). Then the ensemble algebra of our MT-SGD
step: the RBF kernel over the M flattened trunks (median heuristic), the
K×K matrix U = Σ_ab k_ab ⟨s_ia, s_jb⟩ + the repulsion and trace terms,
the min-norm weights on the simplex (Frank-Wolfe), the combined Stein
direction per particle; per task an SVGD direction over the M heads; and
an Adam step (lr 5e-4) on every parameter with minus those directions as
its gradient. Inputs are uniform random, targets random 0/1, seed fixed.
Run with Debian's python3-torch:

    /usr/bin/python3 bench/peers/torch_resnet_step.py [particles] [threads] [steps] [width] [side] [batch]

(defaults 5, 2, 2, 64, 64, 64; width and side shrink the network and the
images, as models/resnet18.Small does, for a quick check). One warm-up
step runs before the timed ones. It prints one line the benchmark parses:
    RESULT ... median X ms/step ... peak RSS Y MB

PEER_TASKS sets the number of tasks (default 10; the paper's CelebA table
has 40). PEER_DEVICE=cuda runs the step on the GPU (a CUDA build of
PyTorch): everything but the K×K min-norm solve, which takes U to the
host once a step as our step does, and the clock is read after
torch.cuda.synchronize().
"""
import math
import os
import resource
import statistics
import sys
import time

import torch
from torch import nn
from torch.nn import functional as F

TASKS, CLASSES, WARMUP, LR, REPULSION, FW_ITERS = int(os.environ.get("PEER_TASKS", "10")), 2, 1, 5e-4, 1.0, 50
DEVICE = torch.device(os.environ.get("PEER_DEVICE", "cpu"))


def arg(i, default):
    return int(sys.argv[i]) if len(sys.argv) > i else default


def conv(cin, cout, k, stride, pad):
    c = nn.Conv2d(cin, cout, k, stride=stride, padding=pad, bias=False)
    # torchvision's (and models/resnet18's): N(0, 2/fan_out).
    nn.init.kaiming_normal_(c.weight, mode="fan_out", nonlinearity="relu")
    return c


class BasicBlock(nn.Module):
    """conv 3×3 → BN → ReLU → conv 3×3 → BN, + shortcut → ReLU."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1, self.bn1 = conv(cin, cout, 3, stride, 1), nn.BatchNorm2d(cout)
        self.conv2, self.bn2 = conv(cout, cout, 3, 1, 1), nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(conv(cin, cout, 1, stride, 0), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + (x if self.downsample is None else self.downsample(x)))


class ResNet18(nn.Module):
    """torchvision's resnet18 without its last layer as the trunk, one Linear 512→2 head per task."""

    def __init__(self, width=64, side=64):
        super().__init__()
        self.conv1, self.bn1 = conv(3, width, 7, 2, 3), nn.BatchNorm2d(width)
        blocks, cin = [], width
        for layer in range(4):
            cout = width << layer
            for b in range(2):
                blocks.append(BasicBlock(cin, cout, 2 if layer > 0 and b == 0 else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.heads = nn.ModuleList([nn.Linear(8 * width, CLASSES) for _ in range(TASKS)])

    def trunk_params(self):
        return [p for name, p in self.named_parameters() if not name.startswith("heads.")]

    def features(self, x):
        h = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, stride=2, padding=1)
        return torch.flatten(F.adaptive_avg_pool2d(self.blocks(h), 1), 1)


def flat_into(dst, tensors):
    """Copies tensors, flattened and concatenated, into the row dst."""
    torch.cat([t.reshape(-1) for t in tensors], out=dst)


class RBF:
    """The kernel of particles.RBF over the rows of theta (M×d): σ² = med/(2·log(M+1)),
    med the median of all M² squared distances, k = exp(−d²/(2σ²)); rep[m] = Σ_a k_am (θ_m − θ_a)."""

    def __init__(self, theta):
        m = theta.shape[0]
        d2 = torch.zeros(m, m, dtype=torch.float64, device=theta.device)
        for a in range(m):
            for b in range(a + 1, m):
                d2[a, b] = d2[b, a] = (theta[a] - theta[b]).pow_(2).sum(dtype=torch.float64)
        h = torch.quantile(d2.reshape(-1), 0.5).item() / (2 * math.log(m + 1))
        self.sigma2 = h if h > 0 else 1.0
        self.d2 = d2
        self.k64 = torch.exp(-d2 / (2 * self.sigma2))
        self.k = self.k64.to(theta.dtype)
        # rep = diag(Σ_a k_am)·θ − Kᵀθ
        self.rep = theta * self.k.sum(0).unsqueeze(1) - self.k.t() @ theta

    def stein(self, smoothed):
        """(1/M)(smoothed[m] + ρ·rep[m]/σ²), in place."""
        return smoothed.add_(self.rep, alpha=REPULSION / self.sigma2).div_(smoothed.shape[0])


def min_norm(u):
    """argmin_{w on the simplex} wᵀUw by Frank-Wolfe, after shifting U by its smallest entry."""
    u = u - u.min()
    k = u.shape[0]
    w = torch.full((k,), 1.0 / k, dtype=u.dtype)
    for _ in range(FW_ITERS):
        uw = u @ w
        t = int(torch.argmin(uw))
        wuw = w @ uw
        denom = wuw - 2 * uw[t] + u[t, t]
        if denom <= 0:
            break
        gamma = float(((wuw - uw[t]) / denom).clamp(0, 1))
        w.mul_(1 - gamma)
        w[t] += gamma
    return w


def gradients(net, x, targets, trunk_scores, head_scores, m):
    """One forward in training mode, then each task's gradient with respect to the trunk and
    its head, negated into the scores (trunk_scores[j, m], head_scores[j][m])."""
    feats = net.features(x)
    trunk = net.trunk_params()
    for j, (head, y) in enumerate(zip(net.heads, targets)):
        loss = F.cross_entropy(head(feats), y)
        hp = list(head.parameters())
        # Keep the forward graph for the next task's pass.
        grads = torch.autograd.grad(loss, trunk + hp, retain_graph=j + 1 < len(targets))
        flat_into(trunk_scores[j, m], grads[: len(trunk)])
        flat_into(head_scores[j][m], grads[len(trunk):])
    trunk_scores[:, m].neg_()
    head_scores[:, m].neg_()


def train_step(nets, opts, x, targets, bufs):
    trunk_scores, head_scores, theta, heads_theta, direction, head_dir = bufs
    k, m, d = trunk_scores.shape
    for i, net in enumerate(nets):
        gradients(net, x, targets, trunk_scores, head_scores, i)
    with torch.no_grad():
        for i, net in enumerate(nets):
            flat_into(theta[i], net.trunk_params())
            for j, head in enumerate(net.heads):
                flat_into(heads_theta[j, i], head.parameters())

        # Trunks: MT-SGD. U_ij = (1/M²) Σ_ab k_ab [⟨s_ia, s_jb⟩ + (ρ/σ²)⟨s_ia − s_jb, Δ_ab⟩
        # + ρ²(d/σ² − ‖Δ_ab‖²/σ⁴)], one task's smoothed scores at a time as particles.MTSGD.
        kern = RBF(theta)
        s2, rho = kern.sigma2, REPULSION
        flat = trunk_scores.reshape(k, m * d)
        r = (flat @ kern.rep.reshape(-1)).double()
        trace = (kern.k64 * (d / s2 - kern.d2 / (s2 * s2))).sum()
        u = torch.zeros(k, k, dtype=torch.float64, device=flat.device)
        smoothed = direction  # a buffer of M×d, free until the direction is formed
        for i in range(k):
            torch.mm(kern.k.t(), trunk_scores[i], out=smoothed)
            a = (flat[i:] @ smoothed.reshape(-1)).double()
            for j in range(i, k):
                u[i, j] = u[j, i] = (a[j - i] + rho / s2 * (r[i] + r[j]) + rho * rho * trace) / (m * m)
        w = min_norm(u.cpu()).to(flat.device)  # one copy of U to the host, as our step
        comb = torch.einsum("k,kn->n", w.to(flat.dtype), flat).reshape(m, d)
        torch.mm(kern.k.t(), comb, out=direction)
        kern.stein(direction)

        # Heads: SVGD per task, the kernel over that task's M heads.
        for j in range(k):
            hk = RBF(heads_theta[j])
            hk.stein(torch.mm(hk.k.t(), head_scores[j], out=head_dir[j]))

        # Adam on every parameter, with −φ as the gradient.
        direction.neg_()
        head_dir.neg_()
        for i, (net, opt) in enumerate(zip(nets, opts)):
            off = 0
            for p in net.trunk_params():
                p.grad = direction[i, off : off + p.numel()].view_as(p)
                off += p.numel()
            for j, head in enumerate(net.heads):
                off = 0
                for p in head.parameters():
                    p.grad = head_dir[j, i, off : off + p.numel()].view_as(p)
                    off += p.numel()
            opt.step()
    return w


def sync():
    """Waits for the GPU's queued work, so that the clock reads the step's time."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def main(network=ResNet18):
    """Times the step on network(width, side) particles, a class with ResNet18's
    trunk_params, features and heads."""
    particles, threads, steps = arg(1, 5), arg(2, 2), arg(3, 2)
    width, side, batch = arg(4, 64), arg(5, 64), arg(6, 64)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    nets = [network(width, side).train().to(DEVICE) for _ in range(particles)]
    opts = [torch.optim.Adam(net.parameters(), lr=LR) for net in nets]
    d = sum(p.numel() for p in nets[0].trunk_params())
    dh = sum(p.numel() for p in nets[0].heads[0].parameters())
    bufs = tuple(
        torch.empty(shape, device=DEVICE)
        for shape in (
            (TASKS, particles, d),  # trunk scores
            (TASKS, particles, dh),  # head scores
            (particles, d),  # trunks
            (TASKS, particles, dh),  # heads
            (particles, d),  # trunk directions
            (TASKS, particles, dh),  # head directions
        )
    )
    x = torch.rand(batch, 3, side, side).to(DEVICE)
    targets = [torch.randint(0, CLASSES, (batch,)).to(DEVICE) for _ in range(TASKS)]
    times = []
    for s in range(WARMUP + steps):
        sync()
        start = time.perf_counter()
        w = train_step(nets, opts, x, targets, bufs)
        sync()
        if s >= WARMUP:
            times.append(1000 * (time.perf_counter() - start))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"trunk parameters {d}, head parameters {dh}; last weights {[round(v, 3) for v in w.tolist()]}")
    print(
        f"RESULT torch {torch.__version__} device={DEVICE} tasks={TASKS} particles={particles} threads={threads} width={width} side={side} batch={batch}: "
        f"median {statistics.median(times):.1f} ms/step over {len(times)} steps "
        f"(min {min(times):.1f}, max {max(times):.1f}); peak RSS {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
