"""The store-demand holiday calendar is date-correct: moving feasts move, weekdays are right."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from dateutil.easter import easter


def test_store_holidays_fall_on_their_true_dates(pool_root: Path) -> None:
    holidays = pd.read_csv(pool_root / "store-item-demand" / "data" / "public" / "holidays.csv", parse_dates=["date"])
    assert holidays["date"].is_unique
    by_name = holidays.groupby("holiday")["date"].apply(list)
    for name, dates in by_name.items():
        assert sorted(d.year for d in dates) == [2015, 2016], name
    for monday in by_name["Carnival Monday"]:
        assert monday.day_name() == "Monday"
        assert monday == pd.Timestamp(easter(monday.year)) - pd.Timedelta(days=48)
    for friday in by_name["Good Friday"]:
        assert friday.day_name() == "Friday"
    # Moving feasts land on different calendar days in different years.
    assert len({(d.month, d.day) for d in by_name["Carnival Monday"]}) == 2
    for christmas in by_name["Christmas Day"]:
        assert (christmas.month, christmas.day) == (12, 25)
