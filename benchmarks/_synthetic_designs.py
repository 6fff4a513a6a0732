"""Synthetic binary designs of the development collection.

Eleven designs that span what the real sets of the development collection
cover unevenly: low-noise smooth boundaries in a few or in twenty dimensions
(where extremely randomized trees are strong), noisy low-dimensional classes
(where the ranking forest is), and axis-aligned and oblique structure. Each is
drawn once with a fixed seed; none is used by the confirmation collection.

=============  =======  ========  =========================================
design         rows     features  what it is
=============  =======  ========  =========================================
twonorm        7,400    20        two Gaussians, means +-2/sqrt(20) (Breiman)
ringnorm       7,400    20        N(0, 4 I) against N(1/sqrt(20), I) (Breiman)
threenorm      7,400    20        a Gaussian against a mixture of two (Breiman)
mc20k          20,000   20        ``make_classification``, 8 informative,
                                  1% label noise
checker        8,000    2         4x4 checkerboard, 10% label noise per cell
checker_clean  6,000    2         the same, 2% label noise
moons          8,000    2         ``make_moons(noise=0.3)``
circles        8,000    2         ``make_circles(noise=0.15, factor=0.6)``
rot5           8,000    5         sin, an interaction, a square and a linear
                                  term, Gaussian noise on the logit
smooth5        6,000    5         a random smooth function (8 tanh units),
                                  cut at its median, 2% label noise
spiral         6,000    2         two interleaved spirals, small jitter
=============  =======  ========  =========================================
"""

import numpy as np

__all__ = ["SYNTHETIC_DESIGNS", "load_synthetic"]


def _breiman(kind, n=7_400, d=20, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    if kind == "twonorm":
        a = 2 / np.sqrt(d)
        return rng.normal(size=(n, d)) + np.where(y[:, None] == 1, a, -a), y
    if kind == "ringnorm":
        a = 1 / np.sqrt(d)
        wide = rng.normal(size=(n, d)) * 2
        narrow = rng.normal(size=(n, d)) + a
        return np.where(y[:, None] == 1, wide, narrow), y
    a = 2 / np.sqrt(d)  # threenorm
    X = rng.normal(size=(n, d))
    flip = rng.randint(0, 2, n)
    mixture = np.where(flip[:, None] == 1, a, -a) * np.ones(d)
    other = np.tile([a, -a], d // 2)
    return X + np.where(y[:, None] == 0, mixture, other), y


def _checker(n, noise, seed):
    rng = np.random.RandomState(seed)
    X = rng.uniform(0, 4, size=(n, 2))
    p = ((np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0) * (1 - 2 * noise) + noise
    return X, (rng.uniform(size=n) < p).astype(int)


def _rot5():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(8_000, 5))
    f = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] ** 2 - X[:, 4]
    return X, (f + 0.3 * rng.normal(size=8_000) > 0.3).astype(int)


def _smooth5():
    rng = np.random.RandomState(1)
    X = rng.uniform(-1, 1, size=(6_000, 5))
    W, b, v = rng.normal(size=(5, 8)), rng.normal(size=8), rng.normal(size=8)
    f = np.tanh(2 * X @ W + b) @ v
    y = (f > np.median(f)).astype(int)
    flip = rng.uniform(size=6_000) < 0.02
    return X, np.where(flip, 1 - y, y)


def _spiral():
    rng = np.random.RandomState(2)
    n = 6_000
    t = rng.uniform(0.5, 3.5 * np.pi, n)
    y = rng.randint(0, 2, n)
    r = t / (3.5 * np.pi)
    X = np.c_[r * np.cos(t + np.pi * y), r * np.sin(t + np.pi * y)]
    return X + rng.normal(0, 0.03, (n, 2)), y


def load_synthetic(name):
    """The design ``name`` of :data:`SYNTHETIC_DESIGNS`: ``(X, y)``."""
    from sklearn.datasets import make_circles, make_classification, make_moons

    if name in ("twonorm", "ringnorm", "threenorm"):
        return _breiman(name)
    if name == "mc20k":
        return make_classification(
            20_000, 20, n_informative=8, flip_y=0.01, random_state=0
        )
    if name == "checker":
        return _checker(8_000, 0.1, 0)
    if name == "checker_clean":
        return _checker(6_000, 0.02, 3)
    if name == "moons":
        return make_moons(8_000, noise=0.3, random_state=0)
    if name == "circles":
        return make_circles(8_000, noise=0.15, factor=0.6, random_state=0)
    if name == "rot5":
        return _rot5()
    if name == "smooth5":
        return _smooth5()
    if name == "spiral":
        return _spiral()
    raise ValueError(f"unknown design {name!r}; expected one of {SYNTHETIC_DESIGNS}")


SYNTHETIC_DESIGNS = [
    "twonorm",
    "ringnorm",
    "threenorm",
    "mc20k",
    "checker",
    "checker_clean",
    "moons",
    "circles",
    "rot5",
    "smooth5",
    "spiral",
]
