"""Gapminder baseline: per indicator, a histogram GBM on the log change since five years earlier.

Features: the five-year lags (log), population growth, year, continent and region codes.
"""

import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
TARGETS = ["life_expectancy", "fertility", "infant_mortality"]


def features(frame: pd.DataFrame) -> pd.DataFrame:
    X = pd.DataFrame({"year": frame["year"]})
    for column in [c for c in frame if c.endswith("_lag5")]:
        X[column] = np.log1p(frame[column])
    X["population_growth"] = np.log(frame["population"] / frame["population_lag5"])
    for column in ("continent", "region"):
        levels = sorted(train[column].unique())
        X[column] = frame[column].map({level: i for i, level in enumerate(levels)})
    return X


X, X_test = features(train), features(test)
submission = pd.DataFrame({"id": test["id"]})
for target in TARGETS:
    # RMSLE is RMSE in log space, and five years rarely move an indicator far from where it was.
    change = np.log1p(train[target]) - np.log1p(train[f"{target}_lag5"])
    model = HistGradientBoostingRegressor(learning_rate=0.05, max_iter=300, max_leaf_nodes=15, random_state=0)
    model.fit(X, change)
    submission[target] = np.clip(np.expm1(model.predict(X_test) + np.log1p(test[f"{target}_lag5"])), 0, None)
submission.to_csv(os.environ["SUBMISSION_PATH"], index=False)
