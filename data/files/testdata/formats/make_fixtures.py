#!/usr/bin/python3
"""Writes the data directories of package files' format tests the way
users write them: NumPy's savez of a pandas frame's to_numpy() (Fortran
order), of int64 and booleans and float16, and pandas' to_csv with its
index, a byte-order mark, ";" and missing values. Run from this directory
with Debian's python3-numpy and python3-pandas:

    /usr/bin/python3 make_fixtures.py

The outputs are committed beside this script. The R fixture
(r-write-csv/) is written here too, byte for byte as R's write.csv
writes a data.frame: a quoted header whose first name is "" (the row
names), quoted row names and strings, TRUE/FALSE, NA for a missing value.

Every directory holds the same task: three species ("ant", "bee", "cat",
as strings in CSV files, 0-2 in archives) from x1, x2 and colour, and a
value in thousands, 4200 + 800·(sin(2·x1) + x2/2 + flag/3) + noise."""
import json
import math
import os

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261201)
SPECIES = np.array(["ant", "bee", "cat"])
COLOURS = np.array(["red", "green", "blue"])


def frame(n):
    x1 = rng.normal(size=n)
    x2 = rng.normal(size=n)
    colour = rng.integers(0, 3, size=n)
    flag = rng.random(n) < 0.5
    score = np.stack([x1, x2, 1.2 * (colour == 0) - 0.6 - x1 / 2], axis=1)
    species = score.argmax(axis=1)
    value = 4200 + 800 * (np.sin(2 * x1) + x2 / 2 + flag / 3) + rng.normal(scale=40, size=n)
    return pd.DataFrame({
        "id": [f"s{i:04d}" for i in range(n)],
        "x1": x1.round(6),
        "x2": x2.round(6),
        "colour": COLOURS[colour],
        "flag": flag,
        "species": SPECIES[species],
        "value": value.round(3),
    })


def tasks(dir, classes=None, **extra):
    species = {"name": "species", "kind": "classification"}
    if classes:
        species["classes"] = classes
    desc = {"tasks": [species, {"name": "value", "kind": "regression"}]}
    desc.update(extra)
    with open(os.path.join(dir, "tasks.json"), "w") as f:
        json.dump(desc, f, indent=2)
        f.write("\n")


def mkdir(name):
    os.makedirs(name, exist_ok=True)
    return name


def with_missing_labels(df, species=0.2, value=0.1):
    df = df.copy()
    df.loc[rng.random(len(df)) < species, "species"] = np.nan
    df.loc[rng.random(len(df)) < value, "value"] = np.nan
    return df


train, test = frame(600), frame(200)

# NumPy archives of a frame's to_numpy(): numeric columns only (one-hot
# colour, flag as a number), which pandas returns in Fortran order.
def numeric(df):
    out = pd.DataFrame({"x1": df.x1, "x2": df.x2, "flag": df.flag.astype(float)})
    for c in COLOURS:
        out["colour_" + c] = (df.colour == c).astype(float)
    return out


def targets(df):
    return pd.DataFrame({"species": pd.Categorical(df.species, categories=SPECIES).codes.astype(np.int64), "value": df.value})


d = mkdir("npz-fortran")
for name, df in [("train", train), ("test", test)]:
    x, y = numeric(df).to_numpy(), targets(df).to_numpy()
    assert x.flags.f_contiguous and not x.flags.c_contiguous, "pandas gave C order"
    assert y.flags.f_contiguous and not y.flags.c_contiguous
    np.savez(os.path.join(d, name + ".npz"), x=x, y=y)
tasks(d)

# int64 inputs (the colour as a code, the flag, x1 in thousandths) and a
# boolean target; float16 inputs and int8 targets.
d = mkdir("npz-int")
for name, df in [("train", train), ("test", test)]:
    x = np.stack([np.round(df.x1 * 1000), np.round(df.x2 * 1000), pd.Categorical(df.colour, categories=COLOURS).codes], axis=1).astype(np.int64)
    np.savez(os.path.join(d, name + ".npz"), x=x, y=(df.species == "cat").to_numpy())
with open(os.path.join(d, "tasks.json"), "w") as f:
    json.dump({"tasks": [{"name": "is_cat", "kind": "classification"}]}, f, indent=2)
    f.write("\n")

d = mkdir("npz-half")
for name, df in [("train", train), ("test", test)]:
    np.savez(os.path.join(d, name + ".npz"), x=numeric(df).to_numpy().astype(np.float16),
             y=targets(df).species.to_numpy().astype(np.int8))
with open(os.path.join(d, "tasks.json"), "w") as f:
    json.dump({"tasks": [{"name": "species", "kind": "classification", "classes": 3}]}, f, indent=2)
    f.write("\n")

# pandas' to_csv as it comes: the index (an unnamed first column), an id
# column, string labels, True/False, an empty cell for each missing label.
d = mkdir("pandas-index")
with_missing_labels(train).to_csv(os.path.join(d, "train.csv"))
test.to_csv(os.path.join(d, "test.csv"))
tasks(d)
new = test.drop(columns=["species", "value"]).head(20)
new.to_csv(os.path.join(d, "new.csv"))

# ";" and a byte-order mark (Excel's "CSV UTF-8"), without the index.
d = mkdir("pandas-semicolon")
with_missing_labels(train).to_csv(os.path.join(d, "train.csv"), sep=";", index=False, encoding="utf-8-sig")
test.to_csv(os.path.join(d, "test.csv"), sep=";", index=False, encoding="utf-8-sig")
tasks(d)


# R's write.csv(df, "train.csv") of the same frame: row names, quoted
# strings, TRUE/FALSE, NA. One input is missing (line 5), for -missing.
def r_value(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "NA"
    if isinstance(v, (bool, np.bool_)):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return '"' + v.replace('"', '""') + '"'
    return repr(float(v)) if not float(v).is_integer() else str(int(v))


def write_r(path, df):
    with open(path, "w", newline="") as f:
        f.write(",".join(['""'] + ['"' + c + '"' for c in df.columns]) + "\n")
        for i, row in enumerate(df.itertuples(index=False), start=1):
            f.write(",".join(['"%d"' % i] + [r_value(v) for v in row]) + "\n")


d = mkdir("r-write-csv")
r_train = with_missing_labels(train).astype(object)
r_train.loc[3, "x2"] = np.nan
write_r(os.path.join(d, "train.csv"), r_train)
write_r(os.path.join(d, "test.csv"), test.astype(object))
tasks(d, classes=3)
