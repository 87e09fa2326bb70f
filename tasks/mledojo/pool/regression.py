"""Regression competitions: house prices, delivery times, hotel rates, bench test times, CRAN check
times, developer salaries, concrete strength and Texas home prices.

Seven real datasets and one seeded generator, each with the metric its target suggests:
RMSLE for prices and run times that span an order of magnitude, MAE for minutes late and for
salaries with a long tail, RMSE for nightly rates and monthly median prices, and R² for a noisy
manufacturing target with outliers (as Mercedes-Benz's was) and for a lab's strength tests.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wmrl_envs.competition import Category

from .sources import load_rdataset, rdataset_source
from .spec import CompetitionSpec, Prepared, random_split, simple_prepared

__all__ = ["SPECS"]


def _ames(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "ames")
    frame["Latitude"] = frame["Latitude"].round(6)
    frame["Longitude"] = frame["Longitude"].round(6)
    train, test = random_split(frame, "Id", 0.3, rng, start=1)
    return simple_prepared(train, test, "Id", {"Sale_Price": 180000})


def _deliveries(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "deliveries")
    train, test = random_split(frame, "order_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "order_id", {"time_to_delivery": 26.0})


def _hotel_rates(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "hotel_rates").drop(columns=["arrival_date_num"])
    frame["historical_adr"] = frame["historical_adr"].round(2)
    train, test = random_split(frame, "booking_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "booking_id", {"avg_price_per_room": 100.0})


def _letters(n: int) -> list[str]:
    """Anonymised level codes as Kaggle hosts write them: a..z, aa, ab, ..."""
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return [alphabet[i] if i < 26 else alphabet[i // 26 - 1] + alphabet[i % 26] for i in range(n)]


def _bench_times(rng: np.random.Generator) -> Prepared:
    n, n_flags, n_packages = 6000, 90, 12
    levels = {
        "model_line": 14,
        "engine": 9,
        "transmission": 4,
        "drive": 3,
        "trim": 7,
        "market": 18,
        "test_station": 5,
        "shift": 3,
    }
    codes = {name: rng.choice(k, n, p=rng.dirichlet(np.full(k, 1.5))) for name, k in levels.items()}
    # Options come in packages, so flags are correlated in blocks, as real configurations are.
    package_of_flag = rng.integers(0, n_packages, n_flags)
    package_taken = rng.random((n, n_packages)) < rng.uniform(0.1, 0.6, n_packages)
    flags = package_taken[:, package_of_flag] ^ (rng.random((n, n_flags)) < 0.04)
    effect = {
        name: rng.normal(0, scale, levels[name])
        for name, scale in [
            ("model_line", 6.0),
            ("engine", 9.0),
            ("transmission", 2.0),
            ("drive", 4.0),
            ("trim", 1.5),
            ("market", 1.0),
            ("test_station", 3.0),
            ("shift", 0.5),
        ]
    }
    flag_effect = np.where(rng.random(n_flags) < 0.15, rng.normal(0, 5.0, n_flags), 0.0)
    hybrid, awd = codes["engine"] >= 7, codes["drive"] == 2
    days_since_calibration = rng.gamma(2.0, 20.0, n)
    seconds = (
        100.0
        + sum(effect[name][codes[name]] for name in levels)
        + flags @ flag_effect
        + 12.0 * (hybrid & awd)
        + 6.0 * (flags[:, 3] & flags[:, 17])
        + 0.08 * np.minimum(days_since_calibration, 90.0)
        + rng.normal(0, 6.0, n) * (1.0 + 0.5 * hybrid)
        + np.where(rng.random(n) < 0.01, rng.uniform(40.0, 120.0, n), 0.0)
    )
    frame = pd.DataFrame({name: np.asarray(_letters(k))[codes[name]] for name, k in levels.items()})
    frame["days_since_calibration"] = np.where(rng.random(n) < 0.12, np.nan, days_since_calibration.round(1))
    for j in range(n_flags):
        frame[f"opt_{j:03d}"] = flags[:, j].astype(int)
    frame["test_seconds"] = seconds.round(2)
    train, test = random_split(frame, "ID", 1 / 3, rng, start=1)
    return simple_prepared(train, test, "ID", {"test_seconds": 100.0})


def _check_times(rng: np.random.Generator) -> Prepared:
    # Checks stopped by an error (status 0, under 1%) only give a lower bound on the time: dropped.
    # The package name identifies the row, not its cost.
    frame = load_rdataset("modeldata", "check_times")
    frame = frame[frame["status"] == 1].drop(columns=["package", "status"]).reset_index(drop=True)
    for name in frame.select_dtypes("float").columns:
        frame[name] = frame[name].round(6)
    train, test = random_split(frame, "id", 0.3, rng, start=1)
    return simple_prepared(train, test, "id", {"check_time": 80})


def _stackoverflow(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "stackoverflow")
    frame["Salary"] = frame["Salary"].round(2)
    train, test = random_split(frame, "respondent_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "respondent_id", {"Salary": 65000.0})


def _concrete(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "concrete")
    train, test = random_split(frame, "sample_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "sample_id", {"compressive_strength": 35.0})


def _txhousing(rng: np.random.Generator) -> Prepared:
    # `volume` / `sales` is the month's mean sale price, a near copy of the median (r = 0.96), and
    # `date` repeats year and month: both go. Months without a reported median have no answer.
    frame = load_rdataset("ggplot2", "txhousing").drop(columns=["volume", "date"])
    frame = frame[frame["median"].notna()].reset_index(drop=True)
    train, test = random_split(frame, "id", 0.3, rng, start=1)
    return simple_prepared(train, test, "id", {"median": 125000.0})


SPECS: tuple[CompetitionSpec, ...] = (
    CompetitionSpec(
        id="ames-house-prices",
        title="Ames House Prices: value a home from 73 facts about it",
        category=Category.REGRESSION,
        metric="rmsle",
        higher_is_better=False,
        id_column="Id",
        target_columns=("Sale_Price",),
        source=rdataset_source("modeldata", "ames", "Ames, Iowa assessor's office sales 2006-2010 (De Cock, 2011)"),
        prepare=_ames,
    ),
    CompetitionSpec(
        id="food-delivery-time",
        title="Food Delivery Time: how many minutes until dinner?",
        category=Category.REGRESSION,
        metric="mae",
        higher_is_better=False,
        id_column="order_id",
        target_columns=("time_to_delivery",),
        source=rdataset_source("modeldata", "deliveries", "orders from a single restaurant, published with modeldata"),
        prepare=_deliveries,
    ),
    CompetitionSpec(
        id="hotel-daily-rates",
        title="Lisbon Resort Hotel: predict the average daily room rate",
        category=Category.REGRESSION,
        metric="rmse",
        higher_is_better=False,
        id_column="booking_id",
        target_columns=("avg_price_per_room",),
        source=rdataset_source(
            "modeldata",
            "hotel_rates",
            "hotel booking demand data of Antonio, de Almeida & Nunes (2019, Data in Brief, CC BY 4.0)",
        ),
        prepare=_hotel_rates,
    ),
    CompetitionSpec(
        id="vehicle-bench-test-time",
        title="Vehicle Bench Test Time: how long will this configuration spend on the test stand?",
        category=Category.REGRESSION,
        metric="r2",
        higher_is_better=True,
        id_column="ID",
        target_columns=("test_seconds",),
        source="seeded generator (wmrl, Apache-2.0): anonymised configurations, option packages, interactions, outliers",
        prepare=_bench_times,
    ),
    CompetitionSpec(
        id="cran-package-check-time",
        title="CRAN Package Check Time: how long will R CMD check run?",
        category=Category.REGRESSION,
        metric="rmsle",
        higher_is_better=False,
        id_column="id",
        target_columns=("check_time",),
        source=rdataset_source(
            "modeldata",
            "check_times",
            "R CMD check times (r-devel Windows) of 13,626 CRAN packages and their parsed sources",
        ),
        prepare=_check_times,
    ),
    CompetitionSpec(
        id="developer-salary-survey",
        title="Developer Salary Survey: what does this developer earn?",
        category=Category.REGRESSION,
        metric="mae",
        higher_is_better=False,
        id_column="respondent_id",
        target_columns=("Salary",),
        source=rdataset_source(
            "modeldata", "stackoverflow", "Stack Overflow Developer Survey (raw data ODbL), subset by Julia Silge"
        ),
        prepare=_stackoverflow,
    ),
    CompetitionSpec(
        id="concrete-compressive-strength",
        title="Concrete Compressive Strength: how strong will this mixture set?",
        category=Category.REGRESSION,
        metric="r2",
        higher_is_better=True,
        id_column="sample_id",
        target_columns=("compressive_strength",),
        source=rdataset_source(
            "modeldata", "concrete", "laboratory tests of Yeh (1998, Cement and Concrete Research), UCI repository"
        ),
        prepare=_concrete,
    ),
    CompetitionSpec(
        id="texas-median-home-price",
        title="Texas Housing: the month's median sale price in 46 cities",
        category=Category.REGRESSION,
        metric="rmse",
        higher_is_better=False,
        id_column="id",
        target_columns=("median",),
        source=rdataset_source(
            "ggplot2", "txhousing", "TAMU Real Estate Center monthly MLS statistics for Texas cities, 2000-2015"
        ),
        prepare=_txhousing,
    ),
)
