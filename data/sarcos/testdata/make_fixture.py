#!/usr/bin/python3
"""Writes a SARCOS-shaped fixture with scipy.io.savemat, a real MAT-file
writer: DIR/sarcos/sarcos_inv.mat (44,484 × 28) and sarcos_inv_test.mat
(4,449 × 28), compressed as MATLAB -v7 files are, with the official
variable names. Values come from a known function, not from the robot:

    x ~ U(-1, 1)^21,  y = sin(x @ A) + 0.5 * x[:, 0:7] * x[:, 7:14],
    A ~ N(0, 4/21) (21 × 7), all from numpy's default_rng(SEED).

usage: /usr/bin/python3 make_fixture.py DIR [SEED]   (Debian: python3-scipy)"""
import os
import sys

import numpy as np
from scipy.io import savemat

out = os.path.join(sys.argv[1], "sarcos")
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
rng = np.random.default_rng(seed)
A = rng.normal(size=(21, 7)) * 2 / np.sqrt(21)


def rows(n):
    x = rng.uniform(-1, 1, size=(n, 21))
    y = np.sin(x @ A) + 0.5 * x[:, 0:7] * x[:, 7:14]
    return np.hstack([x, y])


os.makedirs(out, exist_ok=True)
savemat(os.path.join(out, "sarcos_inv.mat"), {"sarcos_inv": rows(44484)}, do_compression=True)
savemat(os.path.join(out, "sarcos_inv_test.mat"), {"sarcos_inv_test": rows(4449)}, do_compression=True)
