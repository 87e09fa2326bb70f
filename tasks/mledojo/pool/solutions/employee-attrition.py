"""Employee attrition baseline: a shallow histogram GBM on the numbers and native categorical splits."""

import os

import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
y = train.pop("attrition")


def features(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns="employee_id")
    for column in [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]:
        frame[column] = pd.Categorical(frame[column], categories=sorted(train[column].unique()))
    return frame


model = HistGradientBoostingClassifier(
    learning_rate=0.05, max_iter=200, max_leaf_nodes=7, categorical_features="from_dtype", random_state=0
)
model.fit(features(train), y)
attrition = model.predict_proba(features(test))[:, 1]

pd.DataFrame({"employee_id": test["employee_id"], "attrition": attrition}).to_csv(
    os.environ["SUBMISSION_PATH"], index=False
)
