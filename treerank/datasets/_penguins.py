"""The Palmer penguins: a small real data set with missing values and categories."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from importlib import resources

__all__ = ["load_penguins"]


def load_penguins():
    """Load the Palmer penguins as a pandas DataFrame (shipped; nothing downloaded).

    Size measurements of 344 adult penguins of three species (Adelie,
    Chinstrap, Gentoo) observed on three islands of the Palmer Archipelago,
    Antarctica (Gorman, Williams and Fraser, 2014; released under CC0 by the
    Palmer Station Long Term Ecological Research program). It is a real table
    as users meet them: text categories (``species``, ``island``, ``sex``),
    numeric measurements, and missing values (two birds without any
    measurement, eleven without ``sex``), read as NaN.

    Returns
    -------
    frame : pandas.DataFrame of shape (344, 8)
        Columns ``species``, ``island`` (text), ``bill_length_mm``,
        ``bill_depth_mm``, ``flipper_length_mm``, ``body_mass_g`` (floats, NaN
        when missing), ``sex`` (text, NaN when missing) and ``year`` (int).

    References
    ----------
    K. B. Gorman, T. D. Williams and W. R. Fraser. Ecological sexual dimorphism
    and environmental variability within a community of Antarctic penguins
    (genus *Pygoscelis*). *PLoS ONE*, 9(3):e90081, 2014.

    Examples
    --------
    >>> from treerank.datasets import load_penguins
    >>> frame = load_penguins()
    >>> frame.shape
    (344, 8)
    >>> frame.isna().sum().to_dict()["sex"], frame.isna().sum().to_dict()["body_mass_g"]
    (11, 2)
    """
    import pandas as pd

    source = resources.files("treerank.datasets").joinpath("data", "penguins.csv")
    with source.open("rb") as handle:
        frame = pd.read_csv(
            handle,
            na_values=["NA"],
            keep_default_na=False,
            dtype={
                "species": object,
                "island": object,
                "sex": object,
                "bill_length_mm": float,
                "bill_depth_mm": float,
                "flipper_length_mm": float,
                "body_mass_g": float,
                "year": int,
            },
        )
    return frame
