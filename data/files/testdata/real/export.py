import json, pandas as pd
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
# pandas' exports of the R tables: read back, written with to_csv() defaults.
for name in ["airquality", "survey", "penguins"]:
    for split in ["train", "test"]:
        df = pd.read_csv(f"{name}-r/{split}.csv", index_col=0)
        import os; os.makedirs(f"{name}-pandas", exist_ok=True)
        df.to_csv(f"{name}-pandas/{split}.csv")
w = load_wine(as_frame=True).frame
w["cultivar"] = ["class_%d" % t for t in w.pop("target")]
tr, te = train_test_split(w, test_size=0.2, random_state=0, stratify=w["cultivar"])
os.makedirs("wine", exist_ok=True)
tr.to_csv("wine/train.csv"); te.to_csv("wine/test.csv")
