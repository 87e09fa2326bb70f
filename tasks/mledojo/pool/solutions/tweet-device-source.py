"""Tweet source baseline: out-of-fold TF-IDF logistic-regression probabilities stacked with time and style features in a GBM."""

import os

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict

data = os.environ["DATA_DIR"]
train = pd.read_csv(os.path.join(data, "train.csv"), keep_default_na=False)
test = pd.read_csv(os.path.join(data, "test.csv"), keep_default_na=False)
y = train.pop("source")


def style(frame: pd.DataFrame) -> pd.DataFrame:
    # The phone in use changed over the years and with the hour, so time carries most of the signal.
    when = pd.to_datetime(frame["created_at"])
    text = frame["text"]
    return pd.DataFrame({
        "years": (when - pd.Timestamp("2009-01-01", tz="UTC")).dt.days / 365.25,
        "hour": when.dt.hour, "minute": when.dt.minute, "weekday": when.dt.day_of_week,
        "log_retweets": np.log1p(frame["retweet_count"]), "log_likes": np.log1p(frame["favorite_count"]),
        "is_retweet": frame["is_retweet"], "is_reply": frame["is_reply"],
        "length": text.str.len(), "words": text.str.split().str.len(), "links": text.str.count("http"),
        "quoted": text.str.startswith('"').astype(int), "mentions": text.str.count("@"), "hashtags": text.str.count("#"),
        "exclamations": text.str.count("!"), "caps_share": text.str.count("[A-Z]") / (1 + text.str.len()),
    })


tfidf = TfidfVectorizer(min_df=3, max_features=20000, sublinear_tf=True, token_pattern=r"\S+", lowercase=False)
words, words_test = tfidf.fit_transform(train["text"]), tfidf.transform(test["text"])
text_model = LogisticRegression(C=5.0, max_iter=1000)
folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=1)
text_oof = cross_val_predict(text_model, words, y, cv=folds, method="predict_proba")
text_test = text_model.fit(words, y).predict_proba(words_test)

names = [f"text_{c}" for c in text_model.classes_]
X = pd.concat([style(train), pd.DataFrame(text_oof, columns=names)], axis=1)
X_test = pd.concat([style(test), pd.DataFrame(text_test, columns=names)], axis=1)
model = HistGradientBoostingClassifier(max_iter=200, random_state=0).fit(X, y)
pd.DataFrame({"id": test["id"], "source": model.predict(X_test)}).to_csv(os.environ["SUBMISSION_PATH"], index=False)
