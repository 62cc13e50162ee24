"""PyTorch peer of BenchmarkPaperResNetStep (engine/bench_test.go).

torch_resnet_step.py's MT-SGD step (the same forward, per-task gradients,
kernel algebra, min-norm weights, SVGD heads and Adam) on the paper's
trunk, models/resnet18.Paper: the CIFAR-style ResNet-18 of Sener &
Koltun's multi_faces_resnet.py, a 3×3 stride-1 stem convolution, batch
norm and ReLU with no max-pool, the same four layers of basic blocks,
then a 4×4 average pool flattened (2×2×512 = 2,048 features at 64×64)
and one Linear 2048→2 head per task. Batch 64 of 3×64×64, 10 binary
tasks, float32, by default. Run with Debian's python3-torch:

    /usr/bin/python3 bench/peers/torch_paper_resnet_step.py [particles] [threads] [steps] [width] [side] [batch]

(defaults 5, 2, 2, 64, 64, 64; side a multiple of 32). It prints the
RESULT line torch_resnet_step.py prints.
"""
import torch.nn.functional as F
from torch import nn

import torch_resnet_step as step


class PaperResNet18(nn.Module):
    """The paper's trunk with width channels in layer 1, for side×side inputs."""

    def __init__(self, width=64, side=64):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        blocks, cin = [], width
        for layer in range(4):
            cout = width << layer
            for b in range(2):
                blocks.append(step.BasicBlock(cin, cout, 2 if layer > 0 and b == 0 else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        features = 8 * width * (side // 32) ** 2
        self.heads = nn.ModuleList([nn.Linear(features, step.CLASSES) for _ in range(step.TASKS)])

    def trunk_params(self):
        return [p for name, p in self.named_parameters() if not name.startswith("heads.")]

    def features(self, x):
        h = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return F.avg_pool2d(h, 4).flatten(1)


if __name__ == "__main__":
    step.main(PaperResNet18)
