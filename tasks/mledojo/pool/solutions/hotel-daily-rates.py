"""Hotel rate baseline: histogram GBM on the booking, its arrival date's calendar parts and the historical rate."""

import os

import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"))
test = pd.read_csv(os.path.join(data, "test.csv"))
y = train.pop("avg_price_per_room")
categorical = train.drop(columns="arrival_date").select_dtypes(exclude="number").columns


def features(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns="booking_id")
    arrival = pd.to_datetime(frame.pop("arrival_date"))
    frame["arrival_day_of_year"] = arrival.dt.day_of_year
    frame["arrival_weekday"] = arrival.dt.day_of_week
    frame["arrival_days"] = (arrival - pd.Timestamp("2016-07-01")).dt.days  # prices drift upward over time
    frame["nights"] = frame["stays_in_weekend_nights"] + frame["stays_in_week_nights"]
    for column in categorical:
        frame[column] = pd.Categorical(frame[column], categories=sorted(train[column].dropna().unique()))
    return frame


model = HistGradientBoostingRegressor(
    learning_rate=0.1, max_iter=500, max_leaf_nodes=31, categorical_features="from_dtype", random_state=0
)
model.fit(features(train), y)
rate = model.predict(features(test))
pd.DataFrame({"booking_id": test["booking_id"], "avg_price_per_room": rate}).to_csv(os.environ["SUBMISSION_PATH"], index=False)
