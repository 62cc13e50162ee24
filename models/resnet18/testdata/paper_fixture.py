#!/usr/bin/env python3
"""Writes paper_fixture.npz: the reference that TestPaperMatchesPyTorch
(paper_test.go) checks the Go trunk against.

The network is the CIFAR-style ResNet-18 of Sener & Koltun's
multi_faces_resnet.py (isl-org/MultiObjectiveOptimization), written here
with its layer-1 width as a parameter: a 3x3 stride-1 stem convolution
without bias, batch norm, ReLU, no max-pool; four layers of two basic
blocks (width, 2, 4 and 8 times width channels, strides 1, 2, 2, 2; a 1x1
convolution + batch norm on a shortcut that changes shape); a 4x4 average
pool, flattened; one nn.Linear head of 2 outputs per task. Its weights are
PyTorch's default initialisation, which that code keeps.

The fixture is the network at width 4 on 64x64 inputs (so that the last
pool leaves 2x2 windows, as at full width), 4 images and 3 tasks:
  trunk, heads      the parameters, float32, in the Go model's order
                    (TrunkParams, then HeadParams task by task; a head's
                    weight transposed to in x out)
  x, labels         the batch and each task's class per image
  logits            each task's logits in training mode (batch statistics),
                    float64, tasks x batch x 2
  trunk_grad, head_grad  the gradients of the sum over tasks of the mean
                    cross-entropy, float64, in the order of trunk and heads
  running           the batch norms' running mean and variance after that
                    forward pass (momentum 0.1, unbiased variance), float64,
                    in the Go model's TrunkStats order
  full_counts       the full network's (width 64, 40 tasks) trunk and
                    per-head parameter counts
The reference computes in float64 from the float32 values, so that the Go
test can hold its float64 run to 1e-9 and its float32 run to float32's
rounding.

Run with Debian's python3-torch (CPU), from this directory:
    /usr/bin/python3 paper_fixture.py   (torch 1.13 wrote the committed file)
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + self.shortcut(x))


class Trunk(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        blocks, cin = [], width
        for layer in range(4):
            cout = width << layer
            for b in range(2):
                blocks.append(Block(cin, cout, 2 if layer > 0 and b == 0 else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x):
        h = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return F.avg_pool2d(h, 4).view(x.shape[0], -1)


def features(width, side):
    return 8 * width * (side // 32) ** 2


def main():
    torch.manual_seed(20261207)
    width, side, batch, tasks = 4, 64, 4, 3
    trunk = Trunk(width)
    heads = nn.ModuleList(nn.Linear(features(width, side), 2) for _ in range(tasks))
    x = torch.rand(batch, 3, side, side)
    labels = torch.randint(0, 2, (tasks, batch))

    # The float32 values both sides start from.
    trunk32 = np.concatenate([p.detach().numpy().ravel() for p in trunk.parameters()])
    head32 = np.concatenate([np.concatenate([h.weight.detach().numpy().T.ravel(), h.bias.detach().numpy()]) for h in heads])
    x32 = x.numpy().copy()

    trunk.double().train()
    heads.double()
    f = trunk(x.double())
    logits = [h(f) for h in heads]
    loss = sum(F.cross_entropy(z, labels[j]) for j, z in enumerate(logits))
    loss.backward()
    trunk_grad = np.concatenate([p.grad.numpy().ravel() for p in trunk.parameters()])
    head_grad = np.concatenate([np.concatenate([h.weight.grad.numpy().T.ravel(), h.bias.grad.numpy()]) for h in heads])
    running = np.concatenate([np.concatenate([m.running_mean.numpy(), m.running_var.numpy()])
                              for m in trunk.modules() if isinstance(m, nn.BatchNorm2d)])

    full_trunk = sum(p.numel() for p in Trunk(64).parameters())
    full_head = sum(p.numel() for p in nn.Linear(features(64, 64), 2).parameters())
    print(f"full network: trunk {full_trunk:,} parameters, {full_head:,} per head, "
          f"{full_trunk + 40 * full_head:,} with 40 heads")

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paper_fixture.npz")
    np.savez_compressed(out, trunk=trunk32, heads=head32, x=x32, labels=labels.numpy(),
                        logits=torch.stack(logits).detach().numpy(), trunk_grad=trunk_grad, head_grad=head_grad,
                        running=running, full_counts=np.array([full_trunk, full_head], dtype=np.int64))
    print(f"wrote {out}: torch {torch.__version__}, {trunk32.size:,} trunk and {head32.size:,} head parameters")


if __name__ == "__main__":
    main()
