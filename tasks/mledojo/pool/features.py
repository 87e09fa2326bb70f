"""Numeric design matrices for the reference population, from any pool competition's frames.

The population should look like Kaggle teams who did the obvious homework: parse dates,
code categories, join the side tables a competition ships. One generic encoder does that
for every table; three competitions add the joins or text features their data invites.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer

from .spec import CompetitionSpec, Prepared

__all__ = ["design_matrices", "train_targets"]

_DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}"
Hook = Callable[[pd.DataFrame, pd.DataFrame, Mapping[str, pd.DataFrame]], tuple[pd.DataFrame, pd.DataFrame]]


def train_targets(data: Prepared) -> list[str]:
    """The train columns the test file lacks: what a solution learns to predict."""
    return [c for c in data.train.columns if c not in data.test.columns]


def design_matrices(spec: CompetitionSpec, data: Prepared) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Float feature frames for train and test (NaN kept), after the competition's joins."""
    train, test = data.train.drop(columns=train_targets(data)), data.test
    hook = _HOOKS.get(spec.id)
    if hook is not None:
        train, test = hook(train, test, data.extra_files)
    both = pd.concat([train, test], ignore_index=True).drop(columns=[spec.id_column])
    encoded = pd.concat([_encode(both[c]) for c in both.columns], axis=1)
    return encoded.iloc[: len(train)].reset_index(drop=True), encoded.iloc[len(train) :].reset_index(drop=True)


def _encode(column: pd.Series) -> pd.DataFrame:
    name = str(column.name)
    if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype):
        return column.astype(float).to_frame(name)
    values = column.astype("string")
    if values.dropna().str.match(_DATE_PATTERN).all() and values.notna().any():
        stamp = pd.to_datetime(values, utc=True, format="mixed")
        parts = {
            "year": stamp.dt.year,
            "month": stamp.dt.month,
            "dayofweek": stamp.dt.day_of_week,
            "dayofyear": stamp.dt.day_of_year,
            "hour": stamp.dt.hour,
            "days": (stamp - pd.Timestamp("1970-01-01", tz="UTC")).dt.days,
        }
        return pd.DataFrame({f"{name}_{part}": series.astype(float) for part, series in parts.items()})
    codes = pd.Categorical(values, categories=sorted(values.dropna().unique())).codes.astype(float)
    return pd.DataFrame({name: np.where(codes < 0, np.nan, codes)})


def _flights(
    train: pd.DataFrame, test: pd.DataFrame, extra: Mapping[str, pd.DataFrame]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    weather = (
        extra["weather.csv"].drop(columns=["year", "month", "day", "hour"]).drop_duplicates(["origin", "time_hour"])
    )
    planes = extra["planes.csv"][["tailnum", "year", "seats", "engines"]].rename(columns={"year": "plane_year"})

    def join(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.merge(weather, on=["origin", "time_hour"], how="left").merge(planes, on="tailnum", how="left")

    return join(train), join(test)


def _store_demand(
    train: pd.DataFrame, test: pd.DataFrame, extra: Mapping[str, pd.DataFrame]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    holidays = extra["holidays.csv"]

    def join(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.merge(holidays, on="date", how="left").assign(holiday=lambda f: f["holiday"].fillna("none"))

    return join(train), join(test)


def _tweets(
    train: pd.DataFrame, test: pd.DataFrame, extra: Mapping[str, pd.DataFrame]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    tfidf = TfidfVectorizer(min_df=3, ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)[\w@#'’]+|[!?\"“]")
    svd = TruncatedSVD(n_components=40, random_state=0)
    topics_train = svd.fit_transform(tfidf.fit_transform(train["text"]))
    topics_test = svd.transform(tfidf.transform(test["text"]))

    def featurize(frame: pd.DataFrame, topics: np.ndarray) -> pd.DataFrame:
        text = frame["text"]
        style = pd.DataFrame(
            {
                "length": text.str.len(),
                "n_words": text.str.split().str.len(),
                "has_link": text.str.contains("http").astype(int),
                "n_hashtags": text.str.count("#"),
                "n_mentions": text.str.count("@"),
                "n_exclaims": text.str.count("!"),
                "caps_share": text.str.count(r"[A-Z]") / text.str.len().clip(lower=1),
                "starts_with_quote": text.str.startswith('"').astype(int),
            },
            index=frame.index,
        )
        topic_frame = pd.DataFrame(topics, columns=[f"topic_{i}" for i in range(topics.shape[1])], index=frame.index)
        return pd.concat([frame.drop(columns=["text"]), style, topic_frame], axis=1)

    return featurize(train, topics_train), featurize(test, topics_test)


_HOOKS: dict[str, Hook] = {
    "nyc-flight-delays": _flights,
    "store-item-demand": _store_demand,
    "tweet-device-source": _tweets,
}
