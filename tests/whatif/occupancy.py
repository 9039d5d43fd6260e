"""An exact P(max >= 1.5 x mean) for balls into bins by another road than netgen's (which conditions
Poisson loads on their sum): one link at a time, the first of k links takes Binomial(n, 1/k) of the n
balls and the other k - 1 share the rest, so with B_k(n) = P(n balls in k links, every link below t),
B_k(n) = sum_{j < t} C(n, j) (1/k)^j (1 - 1/k)^(n - j) B_{k-1}(n - j), B_1(n) = [n < t]. The tests
derive the counts they expect from it, never from the code under test."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

HOT = Fraction(3, 2)  # the what-if's 1.5 x the mean
TARGET = 0.05
MAX_QPS = 128


def hot_probability_by_recursion(flows: int, links: int, qps: int) -> float:
    balls = flows * qps
    threshold = math.ceil(HOT * balls / links)  # a link at or above it carries >= 1.5 x the mean
    if threshold > balls:
        return 0.0
    n = np.arange(balls + 1)[:, None]
    j = np.arange(threshold)[None, :]
    rest = np.where(j <= n, n - j, 0)
    log_factorial = np.array([math.lgamma(i + 1) for i in range(balls + 1)])
    log_choose = np.where(j <= n, log_factorial[n] - log_factorial[j] - log_factorial[rest], -np.inf)
    below = (np.arange(balls + 1) < threshold).astype(float)  # one link
    for k in range(2, links + 1):
        weights = np.exp(log_choose + j * math.log(1 / k) + rest * math.log1p(-1 / k))
        below = (weights * below[rest]).sum(axis=1)
    return float(1 - below[balls])


def smallest_meeting_count(flows: int, links: int) -> int | None:
    """The smallest QP count whose exact P(1.5x) is under TARGET, every count tried in turn."""
    return next((q for q in range(1, MAX_QPS + 1) if hot_probability_by_recursion(flows, links, q) < TARGET), None)
