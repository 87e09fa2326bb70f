"""US disease baseline: a histogram GBM on log cases, from the disease, state, year, population and log lags."""

import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))


def features(frame: pd.DataFrame) -> pd.DataFrame:
    X = frame[["year", "weeks_reporting_lag5"]].copy()
    for column in ("disease", "state"):
        levels = sorted(train[column].unique())
        X[column] = frame[column].map({level: i for i, level in enumerate(levels)})
    X["log_population"] = np.log(frame["population"])
    X["log_cases_lag5"] = np.log1p(frame["cases_lag5"])
    X["lag5_per_100k"] = frame["cases_lag5"] / frame["population"] * 1e5
    return X


# RMSLE is RMSE in log space: fit the log of the counts.
model = HistGradientBoostingRegressor(learning_rate=0.05, max_iter=300, max_leaf_nodes=15, random_state=0)
model.fit(features(train), np.log1p(train["cases"]))
cases = np.clip(np.expm1(model.predict(features(test))), 0, None)
pd.DataFrame({"id": test["id"], "cases": cases}).to_csv(os.environ["SUBMISSION_PATH"], index=False)
