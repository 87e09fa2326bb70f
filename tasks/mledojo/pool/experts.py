"""The top of the reference boards: "expert" teams that did the homework a strong Kaggler does.

The generic population (`population.py`) sees every competition through one encoder: categories
as integer codes, the raw target, squared-error losses, a fixed 0.5 cut. Real boards are topped
by teams that read the metric and the data. The expert teams here share one toolkit, all of it
fitted on the public training data only:

- a tree matrix with categories kept as categories (native categorical splits) and a linear
  matrix with one-hot categories, log-scaled skewed amounts and missing-value flags;
- the competition's own feature homework (`_HOMEWORK`): ratios and calendar flags, holidays,
  out-of-fold TF-IDF (word and character n-gram) text probabilities for the tweets, an
  appraiser's adjusted comparable sales for Ames, eGFR and the diagnostic cut-offs for the clinic;
- the metric's loss: log targets for RMSLE, the change since a same-station lag when the
  data has one, absolute error for MAE, Poisson counts rounded to whole units for SMAPE,
  balanced classes for macro F1, the F1-best threshold picked on a holdout, the expected grade
  for quadratic kappa;
- gradient boosting run long with early stopping on a holdout, bagged over seeds, and
  blended with the linear model (its strength picked on a holdout) or extra trees, or stacked
  (blend weights picked on a 20% holdout, then every member refitted on all rows).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .features import _DATE_PATTERN, _HOOKS, _encode, train_targets
from .other import ckd_epi_egfr
from .spec import CompetitionSpec, Prepared

__all__ = ["ExpertMatrices", "expert_matrices", "expert_predictions"]

_MAX_CATEGORIES = 250
_MAX_ONE_HOT = 60
_MAX_BOOSTED_TREES = 2400


@dataclass(frozen=True)
class ExpertMatrices:
    """What the expert teams train on: tree and linear matrices and, per target, a log-space offset."""

    trees_train: pd.DataFrame
    trees_test: pd.DataFrame
    linear_train: np.ndarray
    linear_test: np.ndarray
    offsets: Mapping[str, tuple[np.ndarray, np.ndarray]]


def expert_matrices(spec: CompetitionSpec, data: Prepared) -> ExpertMatrices:
    """Build the expert feature matrices once per competition (they are shared by every expert team)."""
    targets = train_targets(data)
    train, test = data.train.drop(columns=targets), data.test
    homework = _HOMEWORK.get(spec.id)
    extra_train, extra_test = (pd.DataFrame(index=train.index), pd.DataFrame(index=test.index))
    if homework is not None:
        extra_train, extra_test = homework(train, test, data.train[targets], data.extra_files)
    hook = _HOOKS.get(spec.id)
    if hook is not None:
        train, test = hook(train, test, data.extra_files)
    both = pd.concat([train, test], ignore_index=True).drop(columns=[spec.id_column])
    extra = pd.concat([extra_train, extra_test], ignore_index=True)
    trees, linear = [], []
    for name in both.columns:
        column = both[name]
        numeric = pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_numeric_dtype(column.dtype)
        values = column.astype("string") if not numeric else None
        if numeric or (values.dropna().str.match(_DATE_PATTERN).all() and values.notna().any()):
            encoded = _encode(column)
            trees.append(encoded)
            linear.append(_linear_numeric(encoded))
            continue
        levels = sorted(values.dropna().unique())
        if len(levels) <= _MAX_CATEGORIES:
            trees.append(pd.DataFrame({name: pd.Categorical(values, categories=levels)}))
        else:
            trees.append(_encode(column))
        if len(levels) <= _MAX_ONE_HOT:
            linear.append(pd.get_dummies(pd.Categorical(values, categories=levels), prefix=name, dtype=float))
    trees.append(extra.astype(float))
    linear.append(_linear_numeric(extra.astype(float)))
    tree_frame = pd.concat(trees, axis=1)
    linear_frame = pd.concat(linear, axis=1)
    n = len(train)
    offsets = {}
    for target in targets:
        lag = next((c for c in test.columns if c.startswith(f"{target}_lag")), None)
        if lag is not None and spec.metric in ("rmsle", "mean_column_rmsle"):
            offsets[target] = (np.log1p(train[lag].to_numpy(float)), np.log1p(test[lag].to_numpy(float)))
    return ExpertMatrices(
        trees_train=tree_frame.iloc[:n].reset_index(drop=True),
        trees_test=tree_frame.iloc[n:].reset_index(drop=True),
        linear_train=linear_frame.iloc[:n].to_numpy(float),
        linear_test=linear_frame.iloc[n:].to_numpy(float),
        offsets=offsets,
    )


def _linear_numeric(frame: pd.DataFrame) -> pd.DataFrame:
    """Log-scale skewed non-negative amounts, flag missing values, fill them with the median."""
    out = {}
    for name in frame.columns:
        values = frame[name].astype(float)
        if values.notna().sum() == 0:
            continue
        if values.min() >= 0 and values.nunique() > 2 and values.skew() > 1.0:
            values = np.log1p(values)
        if values.isna().any():
            out[f"{name}_missing"] = values.isna().astype(float)
        out[name] = values.fillna(values.median())
    return pd.DataFrame(out, index=frame.index)


# ---- per-competition homework -------------------------------------------------------------

Homework = Callable[
    [pd.DataFrame, pd.DataFrame, pd.DataFrame, Mapping[str, pd.DataFrame]], tuple[pd.DataFrame, pd.DataFrame]
]


def _both(fn: Callable[[pd.DataFrame], pd.DataFrame]) -> Homework:
    def homework(train, test, y, extra):
        return fn(train).reset_index(drop=True), fn(test).reset_index(drop=True)

    return homework


def _diamond(frame: pd.DataFrame) -> pd.DataFrame:
    width = frame["y"].replace(0, np.nan)
    return pd.DataFrame(
        {
            "color_rank": frame["color"].map({c: i for i, c in enumerate("DEFGHIJ")}),
            "clarity_rank": frame["clarity"].map(
                {c: i for i, c in enumerate(["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"])}
            ),
            "length_to_width": frame["x"] / width,
            "depth_from_xyz": 2 * frame["z"] / (frame["x"] + width),
            "price_per_carat": frame["price"] / frame["carat"],
            "volume": frame["x"] * frame["y"] * frame["z"],
        }
    )


_AMES_ORDINAL = {
    "Overall_Cond": [
        "Very_Poor",
        "Poor",
        "Fair",
        "Below_Average",
        "Average",
        "Above_Average",
        "Good",
        "Very_Good",
        "Excellent",
    ],
    "Exter_Cond": ["Poor", "Fair", "Typical", "Good", "Excellent"],
    "Heating_QC": ["Poor", "Fair", "Typical", "Good", "Excellent"],
    "Bsmt_Exposure": ["No_Basement", "No", "Mn", "Av", "Gd"],
    "BsmtFin_Type_1": ["No_Basement", "Unf", "LwQ", "Rec", "BLQ", "ALQ", "GLQ"],
    "Garage_Finish": ["No_Garage", "Unf", "RFn", "Fin"],
}


def _ames(frame: pd.DataFrame) -> pd.DataFrame:
    features = {
        "total_sf": frame["Total_Bsmt_SF"] + frame["Gr_Liv_Area"],
        "log_living_area": np.log(frame["Gr_Liv_Area"]),
        "age_at_sale": frame["Year_Sold"] - frame["Year_Built"],
        "years_since_remodel": frame["Year_Sold"] - frame["Year_Remod_Add"],
        "total_baths": frame["Full_Bath"]
        + 0.5 * frame["Half_Bath"]
        + frame["Bsmt_Full_Bath"].fillna(0)
        + 0.5 * frame["Bsmt_Half_Bath"].fillna(0),
        "porch_sf": frame[
            ["Wood_Deck_SF", "Open_Porch_SF", "Enclosed_Porch", "Three_season_porch", "Screen_Porch"]
        ].sum(axis=1),
    }
    # The assessor's grades are ordered: ranks let a linear model use them as one slope each.
    for name, levels in _AMES_ORDINAL.items():
        features[f"{name}_rank"] = frame[name].map({level: i for i, level in enumerate(levels)}).astype(float)
    return pd.DataFrame(features)


_AMES_COMPS = 5  # an appraiser's usual handful of comparable sales


def _ames_place(frame: pd.DataFrame) -> np.ndarray:
    return np.c_[frame["Latitude"].to_numpy() * 111.0, frame["Longitude"].to_numpy() * 82.0]  # ~km in Iowa


def _ames_facts(frame: pd.DataFrame) -> np.ndarray:
    own = _ames(frame)
    return np.c_[
        own["log_living_area"],
        np.log1p(own["total_sf"]),
        own["age_at_sale"],
        own["years_since_remodel"],
        own["total_baths"],
        frame["Garage_Cars"].fillna(0),
        np.log(frame["Lot_Area"]),
        frame["Fireplaces"],
        frame["Year_Built"],
    ]


def _ames_comps(train: pd.DataFrame, log_price: np.ndarray, query: pd.DataFrame) -> np.ndarray:
    """For each `query` house: its nearest sales' log price per square foot, a hedonic model's log
    value, and the nearest sales' log-price residuals under that model (the appraiser's adjusted comps,
    which carry the finish quality the data does not record)."""
    from sklearn.neighbors import KNeighborsRegressor

    per_sqft = log_price - np.log(train["Gr_Liv_Area"].to_numpy(float))
    facts = _ames_facts(train)
    hedonic = RidgeCV(alphas=np.logspace(-2, 3, 11)).fit(facts, log_price)
    residual = log_price - hedonic.predict(facts)
    where, asked = _ames_place(train), _ames_place(query)
    comps = [
        KNeighborsRegressor(n_neighbors=_AMES_COMPS, weights="distance").fit(where, target).predict(asked)
        for target in (per_sqft, residual)
    ]
    return np.c_[comps[0], hedonic.predict(_ames_facts(query)), comps[1]]


def _ames_homework(train, test, y, extra):
    """The house's own facts plus comparable sales nearby (out of fold for the training rows, so no
    row sees its own price)."""
    from sklearn.model_selection import KFold

    log_price = np.log(y.iloc[:, 0].to_numpy(float))
    comps_train = np.zeros((len(train), 3))
    for fit, held in KFold(n_splits=5, shuffle=True, random_state=0).split(train):
        comps_train[held] = _ames_comps(train.iloc[fit], log_price[fit], train.iloc[held])
    out = []
    for frame, comps in ((train, comps_train), (test, _ames_comps(train, log_price, test))):
        own = _ames(frame).reset_index(drop=True)
        own["comps_log_price_per_sqft"] = comps[:, 0]
        own["comps_log_value"] = comps[:, 0] + own["log_living_area"]
        own["comps_adjustment"] = comps[:, 2]
        own["comps_adjusted_log_value"] = comps[:, 1] + comps[:, 2]
        out.append(own)
    return out[0], out[1]


def _credit(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {"amount_to_price": frame["Amount"] / frame["Price"], "income_left": frame["Income"] - frame["Expenses"]}
    )


def _hotel(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"nights": frame["stays_in_weekend_nights"] + frame["stays_in_week_nights"]})


def _food(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"n_items": frame.filter(like="item_").sum(axis=1)})


def _carrier_churn(frame: pd.DataFrame) -> pd.DataFrame:
    """The whole bill and the whole usage, which trees cannot add up from the four periods themselves."""
    periods = ("day", "eve", "night", "intl")
    calls = frame["number_customer_service_calls"]
    return pd.DataFrame(
        {
            "total_charge": sum(frame[f"total_{p}_charge"] for p in periods),
            "total_minutes": sum(frame[f"total_{p}_minutes"] for p in periods),
            "total_calls": sum(frame[f"total_{p}_calls"] for p in periods),
            "many_service_calls": (calls >= 4).astype(float),
            "international_plan_intl_charge": (frame["international_plan"] == "yes") * frame["total_intl_charge"],
        },
        index=frame.index,
    )


def _chicago(frame: pd.DataFrame) -> pd.DataFrame:
    from pandas.tseries.holiday import USFederalHolidayCalendar

    holidays = USFederalHolidayCalendar().holidays("2000-01-01", "2017-12-31")
    date = pd.to_datetime(frame["date"])
    christmas = ((date.dt.month == 12) & (date.dt.day >= 24)) | ((date.dt.month == 1) & (date.dt.day == 1))
    return pd.DataFrame(
        {
            "weekday": date.dt.day_of_week.astype(float),
            "day_of_year": date.dt.day_of_year.astype(float),
            "years": date.dt.year + date.dt.day_of_year / 366,
            "holiday": date.isin(holidays).astype(float),
            "holiday_lag14": (date - pd.Timedelta(days=14)).isin(holidays).astype(float),
            "christmas_week": christmas.astype(float),
        }
    )


def _vehicle(frame: pd.DataFrame) -> pd.DataFrame:
    """Engine-by-drive cells: the interaction a linear model cannot find on its own."""
    cells = frame["engine"].astype(str) + "_" + frame["drive"].astype(str)
    levels = sorted(set(cells))
    return pd.DataFrame(
        {f"engine_drive_{level}": (cells == level).astype(float) for level in levels}, index=frame.index
    )


def _tweets(train: pd.DataFrame, test: pd.DataFrame, y: pd.DataFrame, extra: Mapping[str, pd.DataFrame]):
    """Out-of-fold word and character n-gram TF-IDF logistic-regression probabilities (a classic stack)."""
    label = y.iloc[:, 0].to_numpy()
    words = TfidfVectorizer(
        min_df=2, ngram_range=(1, 2), max_features=50000, sublinear_tf=True, token_pattern=r"\S+", lowercase=False
    )
    chars = TfidfVectorizer(min_df=3, analyzer="char_wb", ngram_range=(2, 5), max_features=60000, sublinear_tf=True)
    text_train = sparse.hstack([words.fit_transform(train["text"]), chars.fit_transform(train["text"])]).tocsr()
    text_test = sparse.hstack([words.transform(test["text"]), chars.transform(test["text"])]).tocsr()
    classes = np.unique(label)
    oof = np.zeros((len(train), len(classes)))
    for fit, held in StratifiedKFold(n_splits=5, shuffle=True, random_state=1).split(text_train, label):
        oof[held] = (
            LogisticRegression(C=8.0, max_iter=2000).fit(text_train[fit], label[fit]).predict_proba(text_train[held])
        )
    full = LogisticRegression(C=8.0, max_iter=2000).fit(text_train, label).predict_proba(text_test)
    names = [f"text_proba_{c}" for c in classes]
    when = pd.to_datetime(pd.concat([train["created_at"], test["created_at"]]), utc=True, format="mixed")
    minute = when.dt.minute.to_numpy(float)
    return (
        pd.DataFrame(oof, columns=names).assign(minute=minute[: len(train)]),
        pd.DataFrame(full, columns=names).assign(minute=minute[len(train) :]),
    )


def _storm_tracks(frame: pd.DataFrame) -> pd.DataFrame:
    """Each observation within its storm's track (name and year): age, trend and the storm's peak.

    Whole storms sit in train or in test, so the track of a test storm is public test data.
    """
    time = pd.to_datetime(frame[["year", "month", "day", "hour"]])
    storm = frame["name"] + "-" + frame["year"].astype(str)
    order = np.lexsort((time.to_numpy(), storm.to_numpy()))
    tracks = pd.DataFrame({"storm": storm, "time": time, "pressure": frame["pressure"], "lat": frame["lat"]}).iloc[
        order
    ]
    group = tracks.groupby("storm", sort=False)
    hours = (tracks["time"] - group["time"].transform("min")).dt.total_seconds() / 3600
    duration = (group["time"].transform("max") - group["time"].transform("min")).dt.total_seconds() / 3600
    out = pd.DataFrame(
        {
            "hours_since_genesis": hours,
            "hours_to_end": duration - hours,
            "track_share": hours / duration.replace(0, np.nan),
            "storm_min_pressure": group["pressure"].transform("min"),
            "above_storm_min": tracks["pressure"] - group["pressure"].transform("min"),
            "pressure_change_prev": group["pressure"].diff(),
            "pressure_change_next": -group["pressure"].diff(-1),
            "lat_change_prev": group["lat"].diff(),
            "storm_observations": group["pressure"].transform("size").astype(float),
        },
        index=tracks.index,
    )
    return out.sort_index()


def _storm_homework(train, test, y, extra):
    both = _storm_tracks(pd.concat([train, test], ignore_index=True))
    return both.iloc[: len(train)].reset_index(drop=True), both.iloc[len(train) :].reset_index(drop=True)


def _electricity_homework(train, test, y, extra):
    """Half-hour of the day (the generic date parts stop at the hour) and the heat of the last hours and day.

    Buildings warm up slowly, so load follows recent temperatures; the public temperatures form one
    unbroken half-hourly series across train and test, so the rolling means need no target.
    """
    both = pd.concat([train, test], ignore_index=True)
    stamp = pd.to_datetime(both["timestamp"])
    order = np.argsort(stamp.to_numpy(), kind="stable")
    temperature = both["temperature"].iloc[order].reset_index(drop=True)
    rolled = pd.DataFrame(
        {
            "half_hour": (stamp.dt.hour * 2 + stamp.dt.minute // 30).iloc[order].to_numpy(float),
            "temp_mean_3h": temperature.rolling(6, min_periods=1).mean().to_numpy(),
            "temp_mean_24h": temperature.rolling(48, min_periods=1).mean().to_numpy(),
            "temp_max_24h": temperature.rolling(48, min_periods=1).max().to_numpy(),
        }
    )
    features = pd.DataFrame(index=range(len(both)), columns=rolled.columns, dtype=float)
    features.iloc[order] = rolled.to_numpy()
    return features.iloc[: len(train)].reset_index(drop=True), features.iloc[len(train) :].reset_index(drop=True)


def _vehicle_homework(train, test, y, extra):
    both = _vehicle(pd.concat([train, test], ignore_index=True))
    return both.iloc[: len(train)].reset_index(drop=True), both.iloc[len(train) :].reset_index(drop=True)


def _clinic(frame: pd.DataFrame) -> pd.DataFrame:
    """A clinician's reading of the checkup: kidney function as eGFR and the diagnostic cut-offs."""
    egfr = ckd_epi_egfr(
        frame["creatinine"].to_numpy(float), frame["age"].to_numpy(float), frame["sex"].eq("F").to_numpy()
    )
    return pd.DataFrame(
        {
            "egfr": egfr,
            "egfr_below_60": np.where(np.isnan(egfr), np.nan, egfr < 60),
            "glucose_over_126": frame["fasting_glucose"].ge(126).astype(float),
            "hba1c_over_6_5": np.where(frame["hba1c"].isna(), np.nan, frame["hba1c"].ge(6.5)),
            "bp_over_140_90": (frame["systolic_bp"].ge(140) | frame["diastolic_bp"].ge(90)).astype(float),
        }
    )


def _concrete(frame: pd.DataFrame) -> pd.DataFrame:
    """Abrams' law: strength falls with the water-to-binder ratio and grows with the log of the age."""
    binder = frame["cement"] + frame["blast_furnace_slag"] + frame["fly_ash"]
    return pd.DataFrame(
        {
            "water_cement": frame["water"] / frame["cement"],
            "water_binder": frame["water"] / binder,
            "aggregate_binder": (frame["coarse_aggregate"] + frame["fine_aggregate"]) / binder,
            "superplasticizer_binder": frame["superplasticizer"] / binder,
            "log_age": np.log(frame["age"]),
        }
    )


def _txhousing(frame: pd.DataFrame) -> pd.DataFrame:
    """One clock for the boom, the crash and the recovery: year and month as a single number."""
    return pd.DataFrame({"time": frame["year"] + (frame["month"] - 1) / 12})


_HOMEWORK: dict[str, Homework] = {
    "diamond-cut-grade": _both(_diamond),
    "ames-house-prices": _ames_homework,
    "credit-scoring-f1": _both(_credit),
    "hotel-daily-rates": _both(_hotel),
    "food-delivery-time": _both(_food),
    "chicago-l-ridership": _both(_chicago),
    "tweet-device-source": _tweets,
    "vehicle-bench-test-time": _vehicle_homework,
    "mobile-carrier-churn": _both(_carrier_churn),
    "atlantic-storm-stage": _storm_homework,
    "concrete-compressive-strength": _both(_concrete),
    "clinic-comorbidity-flags": _both(_clinic),
    "texas-median-home-price": _both(_txhousing),
    "victoria-electricity-demand": _electricity_homework,
}


# ---- the expert teams' models --------------------------------------------------------------


def expert_predictions(
    recipe: Mapping[str, Any], kind: str, metric: str, m: ExpertMatrices, y_train: pd.DataFrame, seed: int
) -> pd.DataFrame:
    """One expert team's submission; `recipe` names its members and their settings (see population.TEAMS)."""
    if kind in ("binary_proba", "binary_label", "multilabel"):
        out = {}
        for column in y_train.columns:
            y = y_train[column].astype(int).to_numpy()
            if kind == "binary_label":
                out[column] = _tuned_labels(recipe, m, y, seed)
            else:
                out[column] = _proba(
                    recipe, m.trees_train, m.linear_train, y, m.trees_test, m.linear_test, seed, metric
                )[:, 1]
        return pd.DataFrame(out)
    if kind in ("multiclass_proba", "multiclass_label", "ordinal"):
        label = y_train.iloc[:, 0]
        classes, y = np.unique(label.to_numpy(), return_inverse=True)
        proba = _proba(recipe, m.trees_train, m.linear_train, y, m.trees_test, m.linear_test, seed, metric)
        if kind == "multiclass_proba":
            return pd.DataFrame(proba, columns=classes)
        if kind == "ordinal":
            # Quadratic kappa punishes distance: submit the rounded expected grade.
            expected = proba @ classes.astype(float)
            return pd.DataFrame({label.name: np.clip(np.rint(expected), classes.min(), classes.max()).astype(int)})
        return pd.DataFrame({label.name: classes[proba.argmax(axis=1)]})
    out = {}
    for column in y_train.columns:
        out[column] = _regression(recipe, metric, m, column, y_train[column].astype(float).to_numpy(), seed)
    return pd.DataFrame(out)


def _tuned_labels(recipe: Mapping[str, Any], m: ExpertMatrices, y: np.ndarray, seed: int) -> np.ndarray:
    """Pick the F1-best cut on 5-fold out-of-fold probabilities, refit on everything and apply it."""
    oof = np.zeros(len(y))
    for fit, held in StratifiedKFold(n_splits=5, shuffle=True, random_state=seed % 1000).split(m.linear_train, y):
        oof[held] = _proba(
            recipe,
            m.trees_train.iloc[fit],
            m.linear_train[fit],
            y[fit],
            m.trees_train.iloc[held],
            m.linear_train[held],
            seed,
            "f1",
        )[:, 1]
    cuts = np.arange(0.1, 0.61, 0.01)
    cut = cuts[int(np.argmax([f1_score(y, oof >= c) for c in cuts]))]
    full = _proba(recipe, m.trees_train, m.linear_train, y, m.trees_test, m.linear_test, seed, "f1")[:, 1]
    return (full >= cut).astype(int)


def _proba(recipe, x_tree, x_lin, y, t_tree, t_lin, seed, metric) -> np.ndarray:
    classes = np.unique(y)
    if recipe.get("stack") and len(recipe["members"]) > 1:
        held = np.random.default_rng(seed).random(len(y)) < 0.2
        probes = _proba_members(
            recipe, x_tree[~held], x_lin[~held], y[~held], x_tree[held], x_lin[held], seed, metric, classes
        )
        truth = np.searchsorted(classes, y[held])
        weights = _best_weights(probes, lambda p: -np.mean(np.log(np.clip(p[np.arange(len(truth)), truth], 1e-9, 1))))
    else:
        weights = recipe.get("weights")
    return _combine(weights, _proba_members(recipe, x_tree, x_lin, y, t_tree, t_lin, seed, metric, classes))


def _proba_members(recipe, x_tree, x_lin, y, t_tree, t_lin, seed, metric, classes) -> list[np.ndarray]:
    n_classes = len(classes)
    weight = "balanced" if metric == "f1_macro" else None
    members = []
    for member in recipe["members"]:
        if member.startswith("gbm"):
            settings = _gbm_settings(recipe, member)
            bags = []
            for bag in range(recipe.get("bags", 1)):
                iters = min(settings["max_iter"], max(60, _MAX_BOOSTED_TREES // (n_classes if n_classes > 2 else 1)))
                model = HistGradientBoostingClassifier(
                    **{**settings, "max_iter": iters},
                    categorical_features="from_dtype",
                    class_weight=weight,
                    early_stopping=len(y) >= 500,
                    validation_fraction=0.1,
                    n_iter_no_change=20,
                    random_state=seed + bag,
                )
                bags.append(_aligned(model.fit(x_tree, y), t_tree, classes))
            members.append(np.mean(bags, axis=0))
        elif member == "linear":
            grid = recipe.get("C", (0.01, 0.1, 1.0, 10.0, 100.0))
            best = _pick_on_holdout(
                grid,
                lambda c: make_pipeline(StandardScaler(), LogisticRegression(C=c, class_weight=weight, max_iter=3000)),
                x_lin,
                y,
                seed,
                proba=True,
            )
            members.append(_aligned(best.fit(x_lin, y), t_lin, classes))
        elif member == "extra_trees":
            model = ExtraTreesClassifier(
                n_estimators=100, min_samples_leaf=2, max_features=0.5, class_weight=weight, n_jobs=1, random_state=seed
            )
            members.append(_aligned(model.fit(_codes(x_tree), y), _codes(t_tree), classes))
    return members


def _aligned(model, x, classes) -> np.ndarray:
    out = np.zeros((len(x), len(classes)))
    out[:, np.searchsorted(classes, model.classes_)] = model.predict_proba(x)
    return out


def _gbm_settings(recipe: Mapping[str, Any], member: str) -> dict[str, Any]:
    """A boosting member's settings: the recipe's, or shallow trees at a faster rate for ``gbm_shallow``."""
    settings = {
        "learning_rate": recipe.get("learning_rate", 0.05),
        "max_iter": recipe.get("max_iter", 2000),
        "max_leaf_nodes": recipe.get("leaves", 31),
        "min_samples_leaf": recipe.get("min_samples_leaf", 20),
        "l2_regularization": recipe.get("l2", 1.0),
    }
    if member == "gbm_shallow":
        settings.update(learning_rate=0.1, max_leaf_nodes=7, max_iter=3000)
    return settings


def _best_weights(probes: list[np.ndarray], loss: Callable[[np.ndarray], float]) -> np.ndarray:
    """The blend weights (a 0.1 grid on the simplex) with the lowest holdout loss: a one-level stack."""
    k = len(probes)
    grid = [w for w in np.ndindex(*(11,) * k) if sum(w) == 10]
    scores = [loss(_combine(np.asarray(w, float), probes)) for w in grid]
    return np.asarray(grid[int(np.argmin(scores))], float)


def _regression(recipe, metric: str, m: ExpertMatrices, column: str, y: np.ndarray, seed: int) -> np.ndarray:
    loss = "squared_error"
    log_space = metric in ("rmsle", "mean_column_rmsle") and (y >= 0).all()
    if metric == "mae":
        loss = "absolute_error"
    elif metric == "smape" and (y >= 0).all():
        loss = "poisson"
    offset_train, offset_test = m.offsets.get(column, (np.zeros(len(y)), np.zeros(len(m.trees_test))))
    target = np.log1p(y) - offset_train if log_space else y
    if recipe.get("stack") and len(recipe["members"]) > 1:
        held = np.random.default_rng(seed).random(len(y)) < 0.2
        probes = _value_members(
            recipe,
            loss,
            m.trees_train[~held],
            m.linear_train[~held],
            target[~held],
            m.trees_train[held],
            m.linear_train[held],
            seed,
        )
        error = (
            (lambda p: np.mean(np.abs(p - target[held])))
            if loss == "absolute_error"
            else (lambda p: np.mean((p - target[held]) ** 2))
        )
        weights = _best_weights(probes, error)
    else:
        weights = recipe.get("weights")
    values = _combine(
        weights, _value_members(recipe, loss, m.trees_train, m.linear_train, target, m.trees_test, m.linear_test, seed)
    )
    if log_space:
        values = np.expm1(values + offset_test)
    if loss == "poisson":
        # Whole units: an exact 0 on a closed day scores 0 under SMAPE, a fractional forecast the maximum.
        values = np.rint(values)
    return np.clip(values, 0.0, None) if (y >= 0).all() else values


def _value_members(recipe, loss: str, x_tree, x_lin, target, t_tree, t_lin, seed) -> list[np.ndarray]:
    members = []
    for member in recipe["members"]:
        if member.startswith("gbm"):
            bags = []
            for bag in range(recipe.get("bags", 1)):
                model = HistGradientBoostingRegressor(
                    loss=loss,
                    **_gbm_settings(recipe, member),
                    categorical_features="from_dtype",
                    early_stopping=True,
                    validation_fraction=0.1,
                    n_iter_no_change=20,
                    random_state=seed + bag,
                )
                bags.append(model.fit(x_tree, target).predict(t_tree))
            members.append(np.mean(bags, axis=0))
        elif member == "linear":
            lin_target = np.log1p(target) if loss == "poisson" else target
            model = make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-2, 3, 21)))
            pred = model.fit(x_lin, lin_target).predict(t_lin)
            members.append(np.expm1(pred).clip(0, None) if loss == "poisson" else pred)
        elif member == "extra_trees":
            model = ExtraTreesRegressor(
                n_estimators=100, min_samples_leaf=2, max_features=0.5, n_jobs=1, random_state=seed
            )
            members.append(model.fit(_codes(x_tree), target).predict(_codes(t_tree)))
    return members


def _combine(weights: Any, members: list[np.ndarray]) -> np.ndarray:
    weights = np.asarray([1.0] * len(members) if weights is None else weights, float)
    return np.tensordot(weights / weights.sum(), np.stack(members), axes=1)


def _pick_on_holdout(grid, build, x, y, seed, proba: bool):
    """The grid value whose model scores best (log loss) on a seeded 20% holdout."""
    if len(grid) == 1:
        return build(grid[0])
    rng = np.random.default_rng(seed)
    held = rng.random(len(y)) < 0.2
    classes = np.unique(y)
    losses = []
    for value in grid:
        p = _aligned(build(value).fit(x[~held], y[~held]), x[held], classes)
        losses.append(-np.mean(np.log(np.clip(p[np.arange(held.sum()), np.searchsorted(classes, y[held])], 1e-9, 1))))
    return build(grid[int(np.argmin(losses))])


def _codes(frame: pd.DataFrame) -> np.ndarray:
    """Categories as integer codes and NaN as -1, for tree models without native categories."""
    out = frame.copy()
    for name in out.columns:
        if isinstance(out[name].dtype, pd.CategoricalDtype):
            out[name] = out[name].cat.codes
    return out.astype(float).fillna(-1.0).to_numpy()
