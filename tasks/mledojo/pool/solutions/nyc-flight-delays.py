"""NYC flight delays baseline: join hourly origin weather and plane metadata, then a histogram GBM on raw features."""

import os

import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
weather = pd.read_csv(os.path.join(data, "weather.csv"))
planes = pd.read_csv(os.path.join(data, "planes.csv"))
y = train.pop("delayed")

weather = weather.drop(columns=["year", "month", "day", "hour"]).drop_duplicates(["origin", "time_hour"])
planes = planes.rename(columns={"year": "plane_year"})[["tailnum", "plane_year", "seats", "engines"]]


def features(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.merge(weather, on=["origin", "time_hour"], how="left").merge(planes, on="tailnum", how="left")
    date = pd.to_datetime(frame[["year", "month", "day"]])
    frame["day_of_year"] = date.dt.day_of_year
    frame["weekday"] = date.dt.weekday
    frame["arr_hour"] = frame["sched_arr_time"] // 100
    for column in ("carrier", "origin", "dest"):
        frame[column] = pd.Categorical(frame[column], categories=sorted(train[column].dropna().unique()))
    return frame.drop(columns=["flight_id", "year", "time_hour", "tailnum", "flight"])


model = HistGradientBoostingClassifier(
    learning_rate=0.1, max_iter=200, max_leaf_nodes=31, categorical_features="from_dtype", random_state=0
)
model.fit(features(train), y)
delayed = model.predict_proba(features(test))[:, 1]

pd.DataFrame({"flight_id": test["flight_id"], "delayed": delayed}).to_csv(os.environ["SUBMISSION_PATH"], index=False)
