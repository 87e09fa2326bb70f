"""Victoria electricity baseline: a histogram GBM (absolute error) on the half-hour, the weekday, the working-day flag and the temperature."""

import os

import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"), parse_dates=["timestamp"])
test = pd.read_csv(os.path.join(data, "test.csv"), parse_dates=["timestamp"])


def features(frame: pd.DataFrame) -> pd.DataFrame:
    stamp = frame["timestamp"]
    # No day-of-year: the test weeks lie after the training months, and trees cannot extrapolate a calendar.
    return pd.DataFrame(
        {
            "half_hour": stamp.dt.hour * 2 + stamp.dt.minute // 30,
            "weekday": stamp.dt.day_of_week,
            "workday": frame["workday"],
            "temperature": frame["temperature"],
        }
    )


model = HistGradientBoostingRegressor(
    loss="absolute_error", learning_rate=0.1, max_iter=300, max_leaf_nodes=31, random_state=0
)
model.fit(features(train), train["demand"])
submission = pd.DataFrame({"id": test["id"], "demand": model.predict(features(test))})
submission.to_csv(os.environ["SUBMISSION_PATH"], index=False)
