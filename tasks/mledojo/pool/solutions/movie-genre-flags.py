"""Movie genre baseline: per genre, a histogram GBM on the numeric columns, log votes and budget, and the MPAA rating."""

import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
GENRES = ["action", "animation", "comedy", "drama", "documentary", "romance", "short"]


def features(frame: pd.DataFrame) -> pd.DataFrame:
    X = frame.drop(columns=["movie_id", "mpaa", *GENRES], errors="ignore")
    X["log_votes"] = np.log1p(frame["votes"])
    X["log_budget"] = np.log1p(frame["budget"])
    X["mpaa"] = frame["mpaa"].map({"PG": 1, "PG-13": 2, "R": 3, "NC-17": 4})
    return X


X, X_test = features(train), features(test)
submission = pd.DataFrame({"movie_id": test["movie_id"]})
for genre in GENRES:
    model = HistGradientBoostingClassifier(learning_rate=0.1, max_iter=150, max_leaf_nodes=15, random_state=0)
    submission[genre] = model.fit(X, train[genre]).predict_proba(X_test)[:, 1]
submission.to_csv(os.environ["SUBMISSION_PATH"], index=False)
