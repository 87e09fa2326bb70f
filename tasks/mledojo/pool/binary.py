"""Binary competitions: churn, flight delays, loan charge-offs, credit scoring, employee
attrition, taxi tips, mobile-carrier churn and cell segmentation quality.

Eight real datasets scored with five binary metrics (ROC AUC, log loss, normalized Gini,
F1, accuracy), so a policy cannot win the category by always producing the same kind of
output: probabilities are ranked, calibrated or thresholded depending on the metric.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from wmrl_envs.competition import Category

from .sources import load_rdataset, rdataset_source
from .spec import CompetitionSpec, Prepared, random_split, simple_prepared

__all__ = ["SPECS"]


def _yes_or_no(
    package: str,
    item: str,
    *,
    label: str,
    positive: str,
    target: str,
    id_column: str,
    sample: float,
    start: int = 1,
    drop: tuple[str, ...] = (),
) -> Callable[[np.random.Generator], Prepared]:
    """The `prepare` of a binary competition on one R dataset: `label` == `positive` becomes the 0/1 `target`.

    `drop` names columns that must not reach the agent; `sample` is the sample submission's constant.
    """

    def prepare(rng: np.random.Generator) -> Prepared:
        frame = load_rdataset(package, item).drop(columns=list(drop))
        frame[target] = (frame.pop(label) == positive).astype(int)
        train, test = random_split(frame, id_column, 0.3, rng, start=start)
        return simple_prepared(train, test, id_column, {target: sample})

    return prepare


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
        prepare=_yes_or_no(
            "modeldata",
            "wa_churn",
            label="churn",
            positive="Yes",
            target="churn",
            id_column="customer_id",
            sample=0.5,
            start=10001,
        ),
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
        prepare=_yes_or_no(
            "modeldata",
            "lending_club",
            label="Class",
            positive="bad",
            target="bad_loan",
            id_column="loan_id",
            sample=0.0,
        ),
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
        prepare=_yes_or_no(
            "modeldata", "credit_data", label="Status", positive="bad", target="default", id_column="Id", sample=0
        ),
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
        prepare=_yes_or_no(
            "modeldata",
            "attrition",
            label="Attrition",
            positive="Yes",
            target="attrition",
            id_column="employee_id",
            sample=0.5,
            start=1001,
        ),
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
        prepare=_yes_or_no(
            "modeldata", "taxi", label="tip", positive="yes", target="tip", id_column="trip_id", sample=0.9
        ),
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
        prepare=_yes_or_no(
            "modeldata", "mlc_churn", label="churn", positive="yes", target="churn", id_column="account_id", sample=0
        ),
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
        prepare=_yes_or_no(  # `case` is the original study's own train/test assignment, not a property of the cell
            "modeldata",
            "cells",
            label="class",
            positive="PS",
            target="poorly_segmented",
            id_column="cell_id",
            sample=1,
            drop=("case",),
        ),
    ),
)
