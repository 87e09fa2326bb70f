"""Ames baseline: average of a histogram GBM and a ridge regression, both fitted to the log sale price."""

import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
# RMSLE is RMSE on log1p prices, so both models learn the log target directly.
y = np.log1p(train.pop("Sale_Price"))

both = pd.concat([train, test], keys=["train", "test"]).drop(columns="Id")
both["total_sf"] = both["Total_Bsmt_SF"] + both["Gr_Liv_Area"]
categorical = both.select_dtypes(exclude="number").columns

trees = both.copy()
trees[categorical] = trees[categorical].astype("category")
gbm = HistGradientBoostingRegressor(
    learning_rate=0.05, max_iter=500, max_leaf_nodes=15, categorical_features="from_dtype", random_state=0
)
gbm.fit(trees.loc["train"], y)

linear = both.copy()
skewed = [c for c in linear.columns.difference(categorical) if linear[c].skew() > 0.75]
linear[skewed] = np.log1p(linear[skewed].clip(lower=0))
linear = pd.get_dummies(linear, dtype=float).fillna(0.0)
ridge = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-1, 3, 20)))
ridge.fit(linear.loc["train"], y)

log_price = (gbm.predict(trees.loc["test"]) + ridge.predict(linear.loc["test"])) / 2
pd.DataFrame({"Id": test["Id"], "Sale_Price": np.expm1(log_price)}).to_csv(os.environ["SUBMISSION_PATH"], index=False)
