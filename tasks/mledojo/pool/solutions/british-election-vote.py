"""British election vote baseline: multinomial logistic regression on leader ratings, the economy and Europe."""

import os

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
y = train.pop("vote")


def features(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns="id")
    frame["male"] = (frame.pop("gender") == "male").astype(int)
    return frame


model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
model.fit(features(train), y)
pd.DataFrame({"id": test["id"], "vote": model.predict(features(test))}).to_csv(
    os.environ["SUBMISSION_PATH"], index=False
)
