"""Chicago 'L' baseline: per station, a histogram GBM on the log change since the 14-day lag.

Features: every lag, the weather, the games, the calendar and US federal holidays.
"""

import os

import numpy as np
import pandas as pd
from pandas.tseries.holiday import USFederalHolidayCalendar
from sklearn.ensemble import HistGradientBoostingRegressor

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"), parse_dates=["date"])
test = pd.read_csv(os.path.join(data, "test.csv"), parse_dates=["date"])
STATIONS = ["clark_lake", "belmont", "austin"]
HOLIDAYS = USFederalHolidayCalendar().holidays("2000-01-01", "2017-12-31")


def features(frame: pd.DataFrame) -> pd.DataFrame:
    X = frame.drop(columns=["date", *STATIONS], errors="ignore")
    lags = [c for c in X if c.endswith("_lag14")]
    X[lags] = np.log1p(X[lags])
    date = frame["date"]
    X["weekday"] = date.dt.day_of_week
    X["day_of_year"] = date.dt.day_of_year
    X["years"] = date.dt.year + date.dt.day_of_year / 366
    # Commuter stations empty on holidays, and a holiday 14 days ago depresses the lag the model leans on.
    X["holiday"] = date.isin(HOLIDAYS).astype(int)
    X["holiday_lag14"] = (date - pd.Timedelta(days=14)).isin(HOLIDAYS).astype(int)
    christmas_week = ((date.dt.month == 12) & (date.dt.day >= 24)) | ((date.dt.month == 1) & (date.dt.day == 1))
    X["christmas_week"] = christmas_week.astype(int)
    return X


X, X_test = features(train), features(test)
submission = pd.DataFrame({"date": test["date"].dt.strftime("%Y-%m-%d")})
for station in STATIONS:
    # RMSLE is RMSE in log space; learning log(today / two weeks ago) keeps the level honest far into the future.
    change = np.log1p(train[station]) - np.log1p(train[f"{station}_lag14"])
    model = HistGradientBoostingRegressor(learning_rate=0.05, max_iter=500, max_leaf_nodes=15, random_state=0)
    model.fit(X, change)
    submission[station] = np.clip(np.expm1(model.predict(X_test) + np.log1p(test[f"{station}_lag14"])), 0, None)
submission.to_csv(os.environ["SUBMISSION_PATH"], index=False)
