"""Clinic comorbidity baseline: per label, the mean of a histogram GBM and a logistic regression with missing-lab flags."""

import os

import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
LABELS = ["diabetes", "hypertension", "ckd"]
Y = train[LABELS]

both = pd.concat([train.drop(columns=LABELS), test], keys=["train", "test"]).drop(columns="patient_id")
categorical = both.select_dtypes(exclude="number").columns
trees = both.copy()
trees[categorical] = trees[categorical].astype("category")

# Labs are ordered on suspicion, so whether a value is missing is a feature of its own.
linear = pd.get_dummies(both, dtype=float)
for lab in ("hba1c", "creatinine", "ldl", "hdl"):
    linear[f"{lab}_missing"] = linear[lab].isna().astype(float)
    linear[lab] = linear[lab].fillna(linear.loc["train", lab].median())

submission = pd.DataFrame({"patient_id": test["patient_id"]})
for label in LABELS:
    gbm = HistGradientBoostingClassifier(
        learning_rate=0.05, max_iter=300, max_leaf_nodes=7, categorical_features="from_dtype", random_state=0
    ).fit(trees.loc["train"], Y[label])
    logistic = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(linear.loc["train"], Y[label])
    submission[label] = (gbm.predict_proba(trees.loc["test"])[:, 1] + logistic.predict_proba(linear.loc["test"])[:, 1]) / 2
submission.to_csv(os.environ["SUBMISSION_PATH"], index=False)
