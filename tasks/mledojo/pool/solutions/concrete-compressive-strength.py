"""Concrete strength baseline: a random forest on the mixture, its age and the water-to-cement ratio."""

import os

import pandas as pd
from sklearn.ensemble import RandomForestRegressor

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
y = train.pop("compressive_strength")


def features(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns="sample_id")
    # Abrams' law: the less water per unit of cement, the stronger the concrete.
    frame["water_cement"] = frame["water"] / frame["cement"]
    return frame


model = RandomForestRegressor(n_estimators=300, min_samples_leaf=2, random_state=0, n_jobs=1)
model.fit(features(train), y)
strength = model.predict(features(test))
pd.DataFrame({"sample_id": test["sample_id"], "compressive_strength": strength}).to_csv(
    os.environ["SUBMISSION_PATH"], index=False
)
