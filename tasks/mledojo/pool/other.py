"""Competitions outside plain classification and regression: ranking, multilabel, forecasting.

These carry the metric shapes that break one-size-fits-all solutions: MAP@10 over ranked
movie lists, mean column-wise ROC AUC over three diagnoses, SMAPE on a store-item sales
forecast, and mean column-wise RMSLE over three train stations' ridership.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from dateutil.easter import easter

from wmrl_envs.competition import Category

from .sources import load_rdataset, rdataset_source
from .spec import CompetitionSpec, Prepared, random_split, simple_prepared

__all__ = ["SPECS", "ckd_epi_egfr"]

_RELEVANT_RATING = 4.0
_FUTURE_SHARE = 0.2


def _movie_recommendations(rng: np.random.Generator) -> Prepared:
    lens = load_rdataset("dslabs", "movielens")
    movies = lens[["movieId", "title", "year", "genres"]].drop_duplicates("movieId").sort_values("movieId")
    ratings = lens[["userId", "movieId", "rating", "timestamp"]].sort_values(
        ["userId", "timestamp", "movieId"], kind="stable"
    )
    # Each user's latest fifth of ratings is the future we ask about; the rest is history.
    position = ratings.groupby("userId").cumcount()
    count = ratings.groupby("userId")["movieId"].transform("size")
    future_mask = position >= count - np.maximum(1, (count * _FUTURE_SHARE).astype(int))
    history, future = ratings[~future_mask], ratings[future_mask & (ratings["rating"] >= _RELEVANT_RATING)]
    answers = (
        future.groupby("userId")["movieId"].agg(lambda ids: " ".join(map(str, ids))).rename("movies").reset_index()
    )
    counts = (
        history.groupby("movieId").size().reset_index(name="n").sort_values(["n", "movieId"], ascending=[False, True])
    )
    popular = " ".join(map(str, counts["movieId"].head(10)))
    sample = answers[["userId"]].assign(movies=popular)
    return Prepared(
        train=history.reset_index(drop=True),
        test=answers[["userId"]],
        answers=answers,
        sample_submission=sample,
        extra_files={"movies.csv": movies.reset_index(drop=True)},
    )


def _comorbidities(rng: np.random.Generator) -> Prepared:
    n = 16000
    age = np.clip(rng.gamma(9.0, 6.0, n) + 10, 18, 95).round()
    sex = rng.choice(["F", "M"], n)
    female = sex == "F"
    smoking = rng.choice(["never", "former", "current"], n, p=[0.55, 0.27, 0.18])
    activity = rng.choice(["low", "moderate", "high"], n, p=[0.4, 0.4, 0.2])
    region = rng.choice(["north", "south", "east", "west", "central"], n, p=[0.25, 0.3, 0.15, 0.2, 0.1])
    family_history = (rng.random(n) < 0.22).astype(int)
    z = (age - 50) / 15
    metabolic = rng.normal(0, 1, n) + 0.3 * z + 0.4 * (activity == "low") - 0.3 * (activity == "high")
    vascular = rng.normal(0, 1, n) + 0.6 * z + 0.4 * (smoking == "current") + 0.2 * (sex == "M")
    bmi = 27 + 3.5 * metabolic + rng.normal(0, 2.5, n)
    # Diagnoses follow the clinical criteria on each patient's usual values; the checkup
    # measures those once, with error, so the labels sit behind thresholds seen through noise.
    resistance = metabolic + 0.8 * family_history + 0.2 * z + rng.normal(0, 0.6, n)
    usual_hba1c = 5.3 + 0.25 * resistance + 0.8 * np.maximum(resistance - 0.8, 0) + rng.normal(0, 0.2, n)
    usual_glucose = 28.7 * usual_hba1c - 60 + rng.normal(0, 9, n)
    diabetes = (usual_hba1c >= 6.5) | (usual_glucose >= 126)
    usual_systolic = 127 + 9 * vascular + 0.25 * (age - 50) + 0.5 * (bmi - 27) + 5 * diabetes + rng.normal(0, 5, n)
    usual_diastolic = 0.45 * usual_systolic + 20 + rng.normal(0, 6, n)
    hypertension = (usual_systolic >= 140) | (usual_diastolic >= 90)
    # CKD: an estimated GFR below 60 (CKD-EPI 2021 from creatinine, age and sex), or kidney
    # damage that only a urine test (not in the data) would show.
    damage = 0.4 * z + 0.7 * diabetes + 0.5 * hypertension + 0.3 * vascular + rng.normal(0, 1, n)
    usual_creatinine = np.exp(
        np.log(np.where(female, 0.72, 0.92)) + rng.normal(0, 0.12, n) + 0.5 * np.maximum(damage - 2.2, 0)
    )
    albuminuria = rng.random(n) < _sigmoid(-3.6 + 1.0 * diabetes + 0.8 * hypertension)
    ckd = (ckd_epi_egfr(usual_creatinine, age, female) < 60) | albuminuria
    glucose = usual_glucose + rng.normal(0, 9, n)
    hba1c = usual_hba1c + rng.normal(0, 0.12, n)
    systolic = usual_systolic + rng.normal(0, 8, n)
    diastolic = usual_diastolic + rng.normal(0, 5, n)
    creatinine = usual_creatinine * np.exp(rng.normal(0, 0.06, n))
    ldl = 120 + 12 * metabolic + rng.normal(0, 28, n)
    hdl = 55 - 5 * metabolic - 6 * (sex == "M") + rng.normal(0, 10, n)
    visits = rng.poisson(1.5 + 1.2 * diabetes + 0.8 * hypertension + 2.0 * ckd + 0.5 * np.maximum(z, 0))
    frame = pd.DataFrame(
        {
            "age": age.astype(int),
            "sex": sex,
            "region": region,
            "smoking": smoking,
            "activity_level": activity,
            "family_history_diabetes": family_history,
            "bmi": bmi.round(1),
            "systolic_bp": systolic.round(),
            "diastolic_bp": diastolic.round(),
            "fasting_glucose": glucose.round(),
            # Doctors order HbA1c mostly when glucose looks high: missing not at random.
            "hba1c": np.where(rng.random(n) < _sigmoid(-1.0 + 0.04 * (glucose - 100)), hba1c.round(1), np.nan),
            "creatinine": np.where(rng.random(n) < 0.15, np.nan, creatinine.round(2)),
            "ldl": np.where(rng.random(n) < 0.3, np.nan, ldl.round()),
            "hdl": np.where(rng.random(n) < 0.3, np.nan, hdl.round()),
            "visits_last_year": visits,
            "diabetes": diabetes.astype(int),
            "hypertension": hypertension.astype(int),
            "ckd": ckd.astype(int),
        }
    )
    train, test = random_split(frame, "patient_id", 0.3, rng, start=100001)
    targets = ["diabetes", "hypertension", "ckd"]
    sample = test[["patient_id"]].assign(**{t: 0.5 for t in targets})
    return Prepared(
        train=train, test=test.drop(columns=targets), answers=test[["patient_id", *targets]], sample_submission=sample
    )


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def ckd_epi_egfr(creatinine: np.ndarray, age: np.ndarray, female: np.ndarray) -> np.ndarray:
    """CKD-EPI 2021 estimated GFR (mL/min/1.73 m²) from serum creatinine (mg/dL), age and sex."""
    kappa, alpha = np.where(female, 0.7, 0.9), np.where(female, -0.241, -0.302)
    ratio = creatinine / kappa
    return (
        142 * np.minimum(ratio, 1) ** alpha * np.maximum(ratio, 1) ** -1.2 * 0.9938**age * np.where(female, 1.012, 1.0)
    )


def _store_demand(rng: np.random.Generator) -> Prepared:
    n_stores, n_items = 5, 10
    dates = pd.date_range("2015-01-01", "2016-12-31", freq="D")
    cutoff = pd.Timestamp("2016-10-01")
    stores = pd.DataFrame(
        {
            "store": np.arange(1, n_stores + 1),
            "city": ["Quito", "Quito", "Guayaquil", "Cuenca", "Ambato"],
            "type": ["A", "B", "A", "C", "B"],
            "size_sqft": [42000, 18000, 35000, 9000, 15000],
        }
    )
    items = pd.DataFrame(
        {
            "item": np.arange(1, n_items + 1),
            "family": [
                "produce",
                "produce",
                "dairy",
                "dairy",
                "bakery",
                "bakery",
                "beverages",
                "beverages",
                "household",
                "household",
            ],
            "unit_price": rng.uniform(0.8, 9.0, n_items).round(2),
        }
    )
    holidays = _holidays(dates)
    store_level = np.array([1.6, 0.8, 1.3, 0.45, 0.7])
    item_level = rng.lognormal(2.6, 0.6, n_items)
    weekly = {
        "A": [0.9, 0.85, 0.88, 0.95, 1.1, 1.35, 1.25],
        "B": [0.95, 0.92, 0.94, 1.0, 1.1, 1.2, 1.0],
        "C": [1.0, 1.0, 1.0, 1.05, 1.1, 1.0, 0.6],
    }
    days = np.asarray((dates - dates[0]).days)
    doy, dow = np.asarray(dates.day_of_year), np.asarray(dates.day_of_week)
    holiday_lift = pd.Series(1.0, index=dates)
    holiday_lift.loc[holidays["date"]] = holidays["lift"].to_numpy()
    rows = []
    for s in range(n_stores):
        for i in range(n_items):
            season = 1 + rng.uniform(0.05, 0.3) * np.sin(2 * np.pi * (doy - rng.uniform(0, 365)) / 365.25)
            trend = np.exp(rng.normal(0.0004, 0.0003) * days)
            promo = rng.random(len(dates)) < rng.uniform(0.02, 0.1)
            mu = store_level[s] * item_level[i] * season * trend * np.asarray(weekly[stores["type"][s]])[dow]
            mu = mu * holiday_lift.to_numpy() * np.where(promo, rng.uniform(1.3, 1.9), 1.0)
            # Poisson-gamma noise: sales are over-dispersed counts, as real shelves are.
            sales = rng.poisson(mu * rng.gamma(15.0, 1 / 15.0, len(dates)))
            rows.append(
                pd.DataFrame(
                    {"date": dates, "store": s + 1, "item": i + 1, "onpromotion": promo.astype(int), "sales": sales}
                )
            )
    frame = (
        pd.concat(rows, ignore_index=True).sort_values(["date", "store", "item"], kind="stable").reset_index(drop=True)
    )
    frame.insert(0, "id", np.arange(len(frame)))
    frame["date"] = frame["date"].dt.strftime("%Y-%m-%d")
    is_test = frame["date"] >= cutoff.strftime("%Y-%m-%d")
    train, test = frame[~is_test].reset_index(drop=True), frame[is_test].reset_index(drop=True)
    holidays = holidays.assign(date=holidays["date"].dt.strftime("%Y-%m-%d")).drop(columns=["lift"])
    return Prepared(
        train=train,
        test=test.drop(columns=["sales"]),
        answers=test[["id", "sales"]],
        sample_submission=test[["id"]].assign(sales=0),
        extra_files={"stores.csv": stores, "items.csv": items, "holidays.csv": holidays},
    )


def _holidays(dates: pd.DatetimeIndex) -> pd.DataFrame:
    """Each year's national holidays with the demand lift they cause (Christmas Day: stores closed).

    Fixed-date holidays keep their day; Carnival and Good Friday move with Easter, so they are
    computed per year (Carnival Monday and Tuesday are 48 and 47 days before Easter Sunday).
    """
    fixed = [
        ("New Year's Day", 1, 1, 0.3),
        ("Labour Day", 5, 1, 0.7),
        ("Independence Day", 8, 10, 1.15),
        ("All Souls' Day", 11, 2, 1.25),
        ("Christmas Eve", 12, 24, 1.8),
        ("Christmas Day", 12, 25, 0.0),
        ("New Year's Eve", 12, 31, 1.5),
    ]
    moving = [("Carnival Monday", -48, 1.2), ("Carnival Tuesday", -47, 1.1), ("Good Friday", -2, 0.9)]
    rows = []
    for year in sorted(set(dates.year)):
        rows += [(pd.Timestamp(year, month, day), name, lift) for name, month, day, lift in fixed]
        sunday = pd.Timestamp(easter(year))
        rows += [(sunday + pd.Timedelta(days=offset), name, lift) for name, offset, lift in moving]
    table = pd.DataFrame(rows, columns=["date", "holiday", "lift"])
    return table.sort_values("date").reset_index(drop=True)


# Chicago's test days come in blocks no longer than the lag, each after an unreleased gap of the lag's
# length: a released `<station>_lag14` then always points at a training day or an unreleased day,
# never at a test day, so no test answer can be read off the public files.
_LAG_DAYS = 14
_CHICAGO_TEST_START = "2012-08-27"


def _chicago_ridership(rng: np.random.Generator) -> Prepared:
    chicago = load_rdataset("modeldata", "Chicago")
    lags = {station: f"{station.lower()}_lag{_LAG_DAYS}" for station in chicago.columns[1:21]}
    frame = chicago.rename(columns=lags).drop(columns=["ridership"])
    # Station columns are 14-day lags, so a station's same-day ridership is its lag 14 rows later.
    frame["clark_lake"] = chicago["ridership"]
    frame["belmont"] = chicago["Belmont"].shift(-_LAG_DAYS)
    frame["austin"] = chicago["Austin"].shift(-_LAG_DAYS)
    frame = frame.dropna(subset=["belmont", "austin"]).reset_index(drop=True)
    frame = frame[["date", *[c for c in frame.columns if c != "date"]]]
    dates = pd.to_datetime(frame["date"])
    assert (dates.diff().dropna() == pd.Timedelta(days=1)).all(), "Chicago must be one row per day"
    since = (dates - pd.Timestamp(_CHICAGO_TEST_START)).dt.days.to_numpy()
    # After the cutoff: 14 unreleased days, then 14 test days, repeated (the gap comes first).
    is_test = (since >= 0) & ((since // _LAG_DAYS) % 2 == 1)
    is_train = since < 0
    train, test = frame[is_train].reset_index(drop=True), frame[is_test].reset_index(drop=True)
    targets = ["clark_lake", "belmont", "austin"]
    means = train[targets].mean().round(1)
    return Prepared(
        train=train,
        test=test.drop(columns=targets),
        answers=test[["date", *targets]],
        sample_submission=test[["date"]].assign(**means.to_dict()),
    )


_GENRES = {
    "Action": "action",
    "Animation": "animation",
    "Comedy": "comedy",
    "Drama": "drama",
    "Documentary": "documentary",
    "Romance": "romance",
    "Short": "short",
}
_MOVIE_ROWS = 16000


def _movie_genres(rng: np.random.Generator) -> Prepared:
    movies = load_rdataset("ggplot2movies", "movies").rename(columns=_GENRES)
    # The title is left out: the genres are to be read from the numbers IMDb users leave behind.
    movies = movies.drop(columns=["title"]).iloc[np.sort(rng.choice(len(movies), _MOVIE_ROWS, replace=False))]
    train, test = random_split(movies.reset_index(drop=True), "movie_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "movie_id", dict.fromkeys(_GENRES.values(), 0.5))


# Gapminder: five years ahead. Test years follow the last training year; every released
# `<target>_lag5` is the value five years earlier, a training year, never a test answer.
_GAPMINDER_HORIZON = 5
_GAPMINDER_TEST_YEARS = range(2011, 2016)
_GAPMINDER_TARGETS = ["life_expectancy", "fertility", "infant_mortality"]


def _gapminder(rng: np.random.Generator) -> Prepared:
    gap = load_rdataset("dslabs", "gapminder").sort_values(["country", "year"], kind="stable")
    lagged = gap[["country", "year", *_GAPMINDER_TARGETS, "population", "gdp"]].assign(
        year=lambda f: f["year"] + _GAPMINDER_HORIZON
    )
    lagged = lagged.rename(columns={c: f"{c}_lag{_GAPMINDER_HORIZON}" for c in lagged.columns[2:]})
    frame = gap.drop(columns=["gdp"]).merge(lagged, on=["country", "year"], how="left")
    # Every row has its targets and their values five years earlier (the natural starting point).
    frame = frame.dropna(subset=[*_GAPMINDER_TARGETS, *(f"{t}_lag{_GAPMINDER_HORIZON}" for t in _GAPMINDER_TARGETS)])
    frame = frame[
        [
            "country",
            "continent",
            "region",
            "year",
            *[c for c in frame.columns if c.endswith("_lag5")],
            "population",
            *_GAPMINDER_TARGETS,
        ]
    ]
    frame = frame.sort_values(["year", "country"], kind="stable").reset_index(drop=True)
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    is_test = frame["year"].isin(_GAPMINDER_TEST_YEARS)
    train = frame[frame["year"] < min(_GAPMINDER_TEST_YEARS)].reset_index(drop=True)
    test = frame[is_test].reset_index(drop=True)
    return simple_prepared(train, test, "id", train[_GAPMINDER_TARGETS].median().round(2).to_dict())


_DEMAND_TEST_START = "2014-11-06"


def _electricity_demand(rng: np.random.Generator) -> Prepared:
    demand = load_rdataset("fpp2", "elecdemand")
    # fpp2 stores 2014 as a half-hourly series from midnight on 1 January (17,520 periods).
    stamps = pd.date_range("2014-01-01", periods=len(demand), freq="30min")
    frame = pd.DataFrame(
        {
            "id": np.arange(1, len(demand) + 1),
            "timestamp": stamps.strftime("%Y-%m-%d %H:%M"),
            "workday": demand["WorkDay"].astype(int),
            "temperature": demand["Temperature"].round(1),
            "demand": demand["Demand"].round(4),
        }
    )
    is_test = stamps >= pd.Timestamp(_DEMAND_TEST_START)
    train, test = frame[~is_test].reset_index(drop=True), frame[is_test].reset_index(drop=True)
    return simple_prepared(train, test, "id", {"demand": round(float(train["demand"].median()), 2)})


# US contagious diseases: the last five reported years of each disease are the future. The
# released `cases_lag5` (same state and disease, five years earlier) always points at a training year.
_DISEASE_HORIZON = 5


def _disease_cases(rng: np.random.Generator) -> Prepared:
    cases = load_rdataset("dslabs", "us_contagious_diseases").rename(columns={"count": "cases"})
    # A state-year with no reporting week is a missing report, not zero cases: it is no target. The
    # year's own reporting weeks are not released either (known only afterwards, and 0 meant 0 cases).
    cases = cases[cases["weeks_reporting"] > 0]
    cases = cases.sort_values(["disease", "state", "year"], kind="stable").reset_index(drop=True)
    lagged = cases[["disease", "state", "year", "cases", "weeks_reporting"]].assign(
        year=lambda f: f["year"] + _DISEASE_HORIZON
    )
    lagged = lagged.rename(columns={"cases": "cases_lag5", "weeks_reporting": "weeks_reporting_lag5"})
    # The first five years of each state's series have no lag to start from: they are left out.
    frame = cases.merge(lagged, on=["disease", "state", "year"], how="inner")
    frame = frame[["disease", "state", "year", "population", "cases_lag5", "weeks_reporting_lag5", "cases"]]
    frame = frame.sort_values(["year", "disease", "state"], kind="stable").reset_index(drop=True)
    is_test = frame["year"] > frame.groupby("disease")["year"].transform("max") - _DISEASE_HORIZON
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    train, test = frame[~is_test].reset_index(drop=True), frame[is_test].reset_index(drop=True)
    return simple_prepared(train, test, "id", {"cases": float(train["cases"].median())})


SPECS: tuple[CompetitionSpec, ...] = (
    CompetitionSpec(
        id="movielens-next-favorites",
        title="MovieLens Next Favorites: which movies will each user love next?",
        category=Category.OTHER,
        metric="map_at_k",
        higher_is_better=True,
        id_column="userId",
        target_columns=("movies",),
        source=rdataset_source(
            "dslabs",
            "movielens",
            "MovieLens latest-small by GroupLens (Harper & Konstan, 2015; research use, not redistributed)",
        ),
        prepare=_movie_recommendations,
        metric_kwargs={"k": 10},
    ),
    CompetitionSpec(
        id="clinic-comorbidity-flags",
        title="Clinic Comorbidity Flags: diabetes, hypertension and kidney disease from a checkup",
        category=Category.OTHER,
        metric="mean_column_roc_auc",
        higher_is_better=True,
        id_column="patient_id",
        target_columns=("diabetes", "hypertension", "ckd"),
        source="seeded generator (wmrl, Apache-2.0): clinical criteria on latent usual values, noisy labs missing not at random",
        prepare=_comorbidities,
    ),
    CompetitionSpec(
        id="store-item-demand",
        title="Store Item Demand: forecast three months of daily sales",
        category=Category.OTHER,
        metric="smape",
        higher_is_better=False,
        id_column="id",
        target_columns=("sales",),
        source="seeded generator (wmrl, Apache-2.0): 50 store-item series with trend, weekly and yearly seasonality, holidays, promotions",
        prepare=_store_demand,
    ),
    CompetitionSpec(
        id="chicago-l-ridership",
        title="Chicago 'L' Ridership: daily entries at three stations",
        category=Category.OTHER,
        metric="mean_column_rmsle",
        higher_is_better=False,
        id_column="date",
        target_columns=("clark_lake", "belmont", "austin"),
        source=rdataset_source(
            "modeldata",
            "Chicago",
            "Chicago Transit Authority ridership with weather and game schedules (Kuhn & Johnson, 2020)",
        ),
        prepare=_chicago_ridership,
    ),
    CompetitionSpec(
        id="movie-genre-flags",
        title="Movie Genre Flags: seven IMDb genres from runtime, budget and the rating histogram",
        category=Category.OTHER,
        metric="mean_column_roc_auc",
        higher_is_better=True,
        id_column="movie_id",
        target_columns=tuple(_GENRES.values()),
        source=rdataset_source(
            "ggplot2movies", "movies", "IMDb movie information and user ratings (Wickham; a seeded 16,000 of 58,788)"
        ),
        prepare=_movie_genres,
    ),
    CompetitionSpec(
        id="gapminder-five-year-outlook",
        title="Gapminder Five-Year Outlook: life expectancy, fertility and infant mortality by country",
        category=Category.OTHER,
        metric="mean_column_rmsle",
        higher_is_better=False,
        id_column="id",
        target_columns=tuple(_GAPMINDER_TARGETS),
        source=rdataset_source("dslabs", "gapminder", "Gapminder Foundation country indicators 1960-2016 (Irizarry)"),
        prepare=_gapminder,
    ),
    CompetitionSpec(
        id="victoria-electricity-demand",
        title="Victoria Electricity Demand: forecast eight weeks of half-hourly load",
        category=Category.OTHER,
        metric="mae",
        higher_is_better=False,
        id_column="id",
        target_columns=("demand",),
        source=rdataset_source(
            "fpp2",
            "elecdemand",
            "half-hourly electricity demand in Victoria, Australia, 2014, with Melbourne temperatures "
            "(Hyndman & Athanasopoulos, Forecasting: Principles and Practice)",
        ),
        prepare=_electricity_demand,
    ),
    CompetitionSpec(
        id="us-disease-case-forecast",
        title="US Disease Case Forecast: yearly cases of seven diseases in every state",
        category=Category.OTHER,
        metric="rmsle",
        higher_is_better=False,
        id_column="id",
        target_columns=("cases",),
        source=rdataset_source(
            "dslabs",
            "us_contagious_diseases",
            "yearly reported cases by US state from Project Tycho (Irizarry)",
        ),
        prepare=_disease_cases,
    ),
)
