#!/usr/bin/python3
"""Writes the MAT-file fixtures of package mat5 with scipy.io.savemat, a
real MAT-file writer, and the values it wrote as JSON for the Go tests to
compare against. Run from this directory with Debian's python3-scipy:

    /usr/bin/python3 make_fixtures.py

The outputs are committed beside this script."""
import json

import numpy as np
import scipy
from scipy.io import savemat

rng = np.random.default_rng(20261122)
doubles = rng.normal(size=(5, 28)) * 10.0 ** rng.integers(-3, 4, size=(5, 28))
doubles[0, 0], doubles[1, 1] = 0.0, -0.0
ints = rng.integers(-300, 300, size=(3, 4)).astype(np.int16)
singles = rng.normal(size=(2, 3)).astype(np.float32)
column = rng.normal(size=(7, 1))

expected = {"scipy": scipy.__version__, "files": {}}


def write(name, variables, **kw):
    savemat(name, variables, **kw)
    expected["files"][name] = {
        k: {"rows": int(v.shape[0]), "cols": int(v.shape[1]), "data": [float(x) for x in np.asarray(v, dtype=np.float64).ravel()]}
        for k, v in variables.items()
        if isinstance(v, np.ndarray) and v.dtype != object and not np.iscomplexobj(v)
    }


write("doubles.mat", {"sarcos_inv": doubles})
write("doubles_compressed.mat", {"sarcos_inv": doubles}, do_compression=True)
write("mixed.mat", {"a_ints": ints, "b_singles": singles, "c_column": column})
write("mixed_compressed.mat", {"a_ints": ints, "b_singles": singles, "c_column": column}, do_compression=True)
write("cell.mat", {"c": np.array([np.ones((2, 2)), "text"], dtype=object)})
write("complex.mat", {"z": np.array([[1 + 2j, 3 - 1j]])})
write("text.mat", {"s": "hello"})
write("cube.mat", {"t": np.zeros((2, 3, 4))})

with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1)
