"""Binary competitions: churn, flight delays, loan charge-offs, credit scoring, employee
attrition, taxi tips, mobile-carrier churn and cell segmentation quality.

Eight real datasets scored with five binary metrics (ROC AUC, log loss, normalized Gini,
F1, accuracy), so a policy cannot win the category by always producing the same kind of
output: probabilities are ranked, calibrated or thresholded depending on the metric.
"""

from __future__ import annotations

import numpy as np

from wmrl_envs.competition import Category

from .sources import load_rdataset, rdataset_source
from .spec import CompetitionSpec, Prepared, random_split, simple_prepared

__all__ = ["SPECS"]


def _telco_churn(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "wa_churn")
    frame["churn"] = (frame.pop("churn") == "Yes").astype(int)
    train, test = random_split(frame, "customer_id", 0.3, rng, start=10001)
    return simple_prepared(train, test, "customer_id", {"churn": 0.5})


def _flight_delays(rng: np.random.Generator) -> Prepared:
    flights = load_rdataset("nycflights13", "flights")
    flights = flights[flights["arr_delay"].notna()].reset_index(drop=True)
    flights = flights.iloc[np.sort(rng.choice(len(flights), 30000, replace=False))].reset_index(drop=True)
    flights["delayed"] = (flights["arr_delay"] > 15).astype(int)
    # Only what is known when the schedule is published: no actual times, no air time.
    flights = flights.drop(columns=["dep_time", "dep_delay", "arr_time", "arr_delay", "air_time"])
    train, test = random_split(flights, "flight_id", 0.3, rng)
    weather = load_rdataset("nycflights13", "weather").round(4)
    planes = load_rdataset("nycflights13", "planes")
    airlines = load_rdataset("nycflights13", "airlines")
    return simple_prepared(
        train,
        test,
        "flight_id",
        {"delayed": 0.5},
        **{"weather.csv": weather, "planes.csv": planes, "airlines.csv": airlines},
    )


def _loan_default(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "lending_club")
    frame["bad_loan"] = (frame.pop("Class") == "bad").astype(int)
    train, test = random_split(frame, "loan_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "loan_id", {"bad_loan": 0.0})


def _credit_risk(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "credit_data")
    frame["default"] = (frame.pop("Status") == "bad").astype(int)
    train, test = random_split(frame, "Id", 0.3, rng, start=1)
    return simple_prepared(train, test, "Id", {"default": 0})


def _employee_attrition(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "attrition")
    frame["attrition"] = (frame.pop("Attrition") == "Yes").astype(int)
    train, test = random_split(frame, "employee_id", 0.3, rng, start=1001)
    return simple_prepared(train, test, "employee_id", {"attrition": 0.5})


def _taxi_tips(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "taxi")
    frame["tip"] = (frame.pop("tip") == "yes").astype(int)
    train, test = random_split(frame, "trip_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "trip_id", {"tip": 0.9})


def _carrier_churn(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "mlc_churn")
    frame["churn"] = (frame.pop("churn") == "yes").astype(int)
    train, test = random_split(frame, "account_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "account_id", {"churn": 0})


def _cell_segmentation(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "cells")
    # `case` is the original study's own train/test assignment, not a property of the cell.
    frame = frame.drop(columns=["case"])
    frame["poorly_segmented"] = (frame.pop("class") == "PS").astype(int)
    train, test = random_split(frame, "cell_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "cell_id", {"poorly_segmented": 1})


SPECS: tuple[CompetitionSpec, ...] = (
    CompetitionSpec(
        id="telco-customer-churn",
        title="Telco Customer Churn: who cancels next month?",
        category=Category.BINARY,
        metric="roc_auc",
        higher_is_better=True,
        id_column="customer_id",
        target_columns=("churn",),
        source=rdataset_source("modeldata", "wa_churn", "IBM Watson Analytics telco churn sample"),
        prepare=_telco_churn,
    ),
    CompetitionSpec(
        id="nyc-flight-delays",
        title="NYC Flight Delays 2013: will this flight arrive late?",
        category=Category.BINARY,
        metric="log_loss",
        higher_is_better=False,
        id_column="flight_id",
        target_columns=("delayed",),
        source=rdataset_source(
            "nycflights13",
            "flights, weather, planes, airlines",
            "US Bureau of Transportation Statistics and NOAA, 2013",
        ),
        prepare=_flight_delays,
    ),
    CompetitionSpec(
        id="lending-club-charge-offs",
        title="Lending Club: spot the loans that go bad",
        category=Category.BINARY,
        metric="normalized_gini",
        higher_is_better=True,
        id_column="loan_id",
        target_columns=("bad_loan",),
        source=rdataset_source("modeldata", "lending_club", "Lending Club public loan data, 2016 Q1"),
        prepare=_loan_default,
    ),
    CompetitionSpec(
        id="credit-scoring-f1",
        title="Credit Scoring: flag the applicants who will default",
        category=Category.BINARY,
        metric="f1",
        higher_is_better=True,
        id_column="Id",
        target_columns=("default",),
        source=rdataset_source("modeldata", "credit_data", "consumer credit applications from a Spanish bank"),
        prepare=_credit_risk,
    ),
    CompetitionSpec(
        id="employee-attrition",
        title="Employee Attrition: which employees are about to leave?",
        category=Category.BINARY,
        metric="roc_auc",
        higher_is_better=True,
        id_column="employee_id",
        target_columns=("attrition",),
        source=rdataset_source("modeldata", "attrition", "IBM Watson Analytics HR employee attrition sample"),
        prepare=_employee_attrition,
    ),
    CompetitionSpec(
        id="chicago-taxi-tips",
        title="Chicago Taxi Tips: will the rider leave a tip?",
        category=Category.BINARY,
        metric="log_loss",
        higher_is_better=False,
        id_column="trip_id",
        target_columns=("tip",),
        source=rdataset_source("modeldata", "taxi", "City of Chicago taxi trips, 2022"),
        prepare=_taxi_tips,
    ),
    CompetitionSpec(
        id="mobile-carrier-churn",
        title="Mobile Carrier Churn: flag the subscribers who will cancel",
        category=Category.BINARY,
        metric="f1",
        higher_is_better=True,
        id_column="account_id",
        target_columns=("churn",),
        source=rdataset_source("modeldata", "mlc_churn", "MLC++ telecom churn benchmark data"),
        prepare=_carrier_churn,
    ),
    CompetitionSpec(
        id="cell-segmentation-quality",
        title="Cell Segmentation: was this cell segmented poorly?",
        category=Category.BINARY,
        metric="accuracy",
        higher_is_better=True,
        id_column="cell_id",
        target_columns=("poorly_segmented",),
        source=rdataset_source("modeldata", "cells", "Hill et al. (2007) high-content screening images"),
        prepare=_cell_segmentation,
    ),
)
