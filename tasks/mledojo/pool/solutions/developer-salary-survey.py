"""Developer salary baseline: histogram GBM with absolute-error loss on country, experience, company size and roles."""

import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
y = train.pop("Salary")


def features(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns="respondent_id")
    for name in ("Country", "Remote"):
        frame[name] = pd.Categorical(frame[name], categories=sorted(train[name].unique()))
    return frame


# The metric is MAE, so the model fits the conditional median salary rather than the mean.
model = HistGradientBoostingRegressor(
    loss="absolute_error", learning_rate=0.05, max_iter=300, max_leaf_nodes=15,
    categorical_features="from_dtype", random_state=0,
)
model.fit(features(train), y)
salary = np.clip(model.predict(features(test)), 0, None)
pd.DataFrame({"respondent_id": test["respondent_id"], "Salary": salary}).to_csv(
    os.environ["SUBMISSION_PATH"], index=False
)
