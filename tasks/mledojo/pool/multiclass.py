"""Multiclass competitions: leaf and rodent species, job runtimes, storm stages, tweet devices, votes,
diamond cuts and loan grades.

They cover the four ways a multiclass answer is graded, twice each: calibrated probabilities
(log loss over 32 leaf or 12 rodent species), macro F1 on imbalanced classes (job runtimes,
storm stages), accuracy (tweets, votes), and quadratic weighted kappa on an ordinal grade
(diamond cuts, loan grades), where being one grade off costs little.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from wmrl_envs.competition import Category

from .sources import load_rdataset, rdataset_source
from .spec import CompetitionSpec, Prepared, one_hot, random_split, simple_prepared

__all__ = ["SPECS"]

# The 32 species of modeldata's leaf_id_flavia, sorted: the submission's probability columns.
_LEAF_SPECIES: tuple[str, ...] = (
    "anhui_barberry",
    "beale_s_barberry",
    "big_fruited_holly",
    "camphortree",
    "canadian_poplar",
    "castor_aralia",
    "chinese_cinnamon",
    "chinese_horse_chestnut",
    "chinese_redbud",
    "chinese_toon",
    "chinese_tulip_tree",
    "crape_myrtle",
    "deodar",
    "ford_woodlotus",
    "ginkgo_maidenhair_tree",
    "glossy_privet",
    "goldenrain_tree",
    "japanese_cheesewood",
    "japanese_flowering_cherry",
    "japanese_maple",
    "japanese_viburnum",
    "nanmu",
    "oleander",
    "peach",
    "pubescent_bamboo",
    "southern_magnolia",
    "sweet_osmanthus",
    "tangerine",
    "trident_maple",
    "true_indigo",
    "wintersweet",
    "yew_plum_pine",
)
_TWEET_SOURCES = {"Twitter Web Client": "web", "Twitter for Android": "android", "Twitter for iPhone": "iphone"}
_CUT_GRADES = {"Fair": 1, "Good": 2, "Very Good": 3, "Premium": 4, "Ideal": 5}
# The 12 rodent species of the Portal Project teaching data with at least 90 captures that were
# weighed or measured (the two ground squirrels are counted on sight and never measured).
_RODENT_SPECIES: tuple[str, ...] = ("DM", "DO", "DS", "NL", "OL", "OT", "PE", "PF", "PM", "PP", "RM", "SH")
_LOAN_GRADES = {grade: i for i, grade in enumerate("ABCDEFG", start=1)}
# Loan columns that are the grade in disguise (its rate and the payments that follow from it) or
# that are only known after the loan was graded; `emp_title` is free-typed job titles.
_LOAN_DROPPED = (
    "emp_title",
    "interest_rate",
    "installment",
    "sub_grade",
    "loan_status",
    "initial_listing_status",
    "disbursement_method",
    "balance",
    "paid_total",
    "paid_principal",
    "paid_interest",
    "paid_late_fees",
)


def _leaf_species(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "leaf_id_flavia")
    train, test = random_split(frame, "id", 0.3, rng, start=1)
    classes = list(_LEAF_SPECIES)
    answers = pd.concat([test[["id"]], one_hot(test["species"], classes)], axis=1)
    sample = pd.concat([test[["id"]], pd.DataFrame(1.0 / len(classes), index=test.index, columns=classes)], axis=1)
    return Prepared(train=train, test=test.drop(columns=["species"]), answers=answers, sample_submission=sample)


def _hpc_jobs(rng: np.random.Generator) -> Prepared:
    frame = load_rdataset("modeldata", "hpc_data")
    frame["hour"] = frame["hour"].round(4)
    train, test = random_split(frame, "job_id", 0.3, rng, start=1)
    return simple_prepared(train, test, "job_id", {"class": "VF"})


def _tweet_source(rng: np.random.Generator) -> Prepared:
    tweets = load_rdataset("dslabs", "trump_tweets")
    frame = pd.DataFrame(
        {
            "text": tweets["text"].str.replace(r"[\r\n]+", " ", regex=True),
            "created_at": tweets["created_at"],
            "retweet_count": tweets["retweet_count"],
            "favorite_count": tweets["favorite_count"],
            "is_retweet": tweets["is_retweet"].astype(int),
            "is_reply": tweets["in_reply_to_user_id_str"].notna().astype(int),
            "source": tweets["source"].map(_TWEET_SOURCES).fillna("other"),
        }
    )
    train, test = random_split(frame, "id", 0.3, rng, start=1)
    return simple_prepared(train, test, "id", {"source": "web"})


def _diamond_cut(rng: np.random.Generator) -> Prepared:
    diamonds = load_rdataset("ggplot2", "diamonds")
    frame = diamonds.iloc[np.sort(rng.choice(len(diamonds), 30000, replace=False))].reset_index(drop=True)
    frame["cut"] = frame["cut"].map(_CUT_GRADES).astype(int)
    train, test = random_split(frame, "id", 0.3, rng)
    return simple_prepared(train, test, "id", {"cut": 5})


def _rodent_species(rng: np.random.Generator) -> Prepared:
    captures = load_rdataset("ratdat", "complete_old")
    frame = captures[captures["species_id"].isin(_RODENT_SPECIES)]
    frame = frame[["year", "month", "day", "plot_id", "plot_type", "sex", "hindfoot_length", "weight", "species_id"]]
    train, test = random_split(frame.reset_index(drop=True), "id", 0.3, rng, start=1)
    classes = list(_RODENT_SPECIES)
    answers = pd.concat([test[["id"]], one_hot(test["species_id"], classes)], axis=1)
    sample = pd.concat([test[["id"]], pd.DataFrame(1.0 / len(classes), index=test.index, columns=classes)], axis=1)
    return Prepared(train=train, test=test.drop(columns=["species_id"]), answers=answers, sample_submission=sample)


def _storm_stage(rng: np.random.Generator) -> Prepared:
    """Whole storms go to train or test (a test storm is never half seen), 30% of the storms to test."""
    storms = load_rdataset("dplyr", "storms")
    # Wind defines the stage (and the category and wind-radius columns follow from it): all left out.
    frame = storms[["name", "year", "month", "day", "hour", "lat", "long", "pressure", "status"]].copy()
    key = frame["name"] + "-" + frame["year"].astype(str)
    keys = np.array(sorted(key.unique()))
    test_keys = set(keys[rng.permutation(len(keys))[: round(len(keys) * 0.3)]])
    in_test = key.isin(test_keys).to_numpy()
    parts = [frame[~in_test], frame[in_test]]
    parts = [part.iloc[rng.permutation(len(part))].reset_index(drop=True) for part in parts]
    train, test = parts
    train.insert(0, "id", np.arange(1, len(train) + 1))
    test.insert(0, "id", np.arange(len(train) + 1, len(train) + len(test) + 1))
    return simple_prepared(train, test, "id", {"status": "tropical storm"})


def _loan_grade(rng: np.random.Generator) -> Prepared:
    loans = load_rdataset("openintro", "loans_full_schema")
    frame = loans.drop(columns=list(_LOAN_DROPPED))
    frame["grade"] = frame["grade"].map(_LOAN_GRADES).astype(int)
    train, test = random_split(frame, "id", 0.3, rng, start=1)
    return simple_prepared(train, test, "id", {"grade": 2})


def _election_vote(rng: np.random.Generator) -> Prepared:
    beps = load_rdataset("carData", "BEPS")
    frame = beps.rename(columns=lambda c: c.replace(".", "_"))
    train, test = random_split(frame, "id", 0.3, rng, start=1)
    return simple_prepared(train, test, "id", {"vote": "Labour"})


SPECS: tuple[CompetitionSpec, ...] = (
    CompetitionSpec(
        id="leaf-species-flavia",
        title="Leaf Species Identification: 32 plants from shape and margin features",
        category=Category.MULTICLASS,
        metric="multiclass_log_loss",
        higher_is_better=False,
        id_column="id",
        target_columns=_LEAF_SPECIES,
        source=rdataset_source(
            "modeldata",
            "leaf_id_flavia",
            "Flavia leaf image set (Wu et al., 2007), shape and margin features as published in modeldata",
        ),
        prepare=_leaf_species,
    ),
    CompetitionSpec(
        id="hpc-job-runtime",
        title="HPC Job Runtime: very fast, fast, moderate or long?",
        category=Category.MULTICLASS,
        metric="f1_macro",
        higher_is_better=True,
        id_column="job_id",
        target_columns=("class",),
        source=rdataset_source(
            "modeldata",
            "hpc_data",
            "Pfizer high-performance computing job logs (Kuhn & Johnson, Applied Predictive Modeling)",
        ),
        prepare=_hpc_jobs,
    ),
    CompetitionSpec(
        id="tweet-device-source",
        title="Which Phone Sent This Tweet?",
        category=Category.MULTICLASS,
        metric="accuracy",
        higher_is_better=True,
        id_column="id",
        target_columns=("source",),
        source=rdataset_source(
            "dslabs", "trump_tweets", "public tweets of @realDonaldTrump 2009-2017 from the Trump Twitter Archive"
        ),
        prepare=_tweet_source,
    ),
    CompetitionSpec(
        id="diamond-cut-grade",
        title="Diamond Cut Grade: read the cut from the measurements",
        category=Category.MULTICLASS,
        metric="quadratic_weighted_kappa",
        higher_is_better=True,
        id_column="id",
        target_columns=("cut",),
        source=rdataset_source("ggplot2", "diamonds", "round-cut diamond listings collected by Hadley Wickham"),
        prepare=_diamond_cut,
    ),
    CompetitionSpec(
        id="portal-rodent-species",
        title="Portal Rodents: which species is in the trap?",
        category=Category.MULTICLASS,
        metric="multiclass_log_loss",
        higher_is_better=False,
        id_column="id",
        target_columns=_RODENT_SPECIES,
        source=rdataset_source(
            "ratdat",
            "complete_old",
            "Portal Project Teaching Database, rodent captures near Portal, Arizona, 1977-1989 (Ernest et al.)",
        ),
        prepare=_rodent_species,
    ),
    CompetitionSpec(
        id="atlantic-storm-stage",
        title="Atlantic Storm Stage: depression, storm, hurricane or something else?",
        category=Category.MULTICLASS,
        metric="f1_macro",
        higher_is_better=True,
        id_column="id",
        target_columns=("status",),
        source=rdataset_source(
            "dplyr", "storms", "NOAA Atlantic hurricane database (HURDAT2) best-track positions, 1975-2022"
        ),
        prepare=_storm_stage,
    ),
    CompetitionSpec(
        id="loan-grade-kappa",
        title="Lending Club Loan Grade: A to G from the credit file",
        category=Category.MULTICLASS,
        metric="quadratic_weighted_kappa",
        higher_is_better=True,
        id_column="id",
        target_columns=("grade",),
        source=rdataset_source(
            "openintro", "loans_full_schema", "Lending Club loans issued January-March 2018, as published by OpenIntro"
        ),
        prepare=_loan_grade,
    ),
    CompetitionSpec(
        id="british-election-vote",
        title="British Election Panel: Labour, Conservative or Liberal Democrat?",
        category=Category.MULTICLASS,
        metric="accuracy",
        higher_is_better=True,
        id_column="id",
        target_columns=("vote",),
        source=rdataset_source(
            "carData",
            "BEPS",
            "British Election Panel Study 1997-2001 (Fox & Weisberg, An R Companion to Applied Regression)",
        ),
        prepare=_election_vote,
    ),
)
