"""Diamond cut baseline: GBM class probabilities on the stone's geometry, submitted as the rounded expected grade."""

import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
y = train.pop("cut")

COLORS = {c: i for i, c in enumerate("DEFGHIJ")}
CLARITIES = {c: i for i, c in enumerate(["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"])}


def features(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns="id")
    frame["color"] = frame["color"].map(COLORS)
    frame["clarity"] = frame["clarity"].map(CLARITIES)
    width = frame["y"].replace(0, np.nan)
    frame["length_to_width"] = frame["x"] / width
    frame["depth_from_xyz"] = 2 * frame["z"] / (frame["x"] + width)
    frame["price_per_carat"] = frame["price"] / frame["carat"]
    return frame


model = HistGradientBoostingClassifier(max_iter=200, random_state=0).fit(features(train), y)
# Quadratic kappa punishes distance, so the expected grade beats the most likely one.
expected = model.predict_proba(features(test)) @ model.classes_
cut = np.clip(np.round(expected), 1, 5).astype(int)
pd.DataFrame({"id": test["id"], "cut": cut}).to_csv(os.environ["SUBMISSION_PATH"], index=False)
