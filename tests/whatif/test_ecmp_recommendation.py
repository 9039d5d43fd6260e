"""The QP recommendation (issue 31, 5): the smallest count whose P(max >= 1.5 x mean) is under 5 %,
every count tried, by an exact P that another exact method (tests/whatif/occupancy.py) and the Monte
Carlo both confirm."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from netgen.whatif import ecmp
from netgen.whatif.ecmp import simulate
from tests.whatif.occupancy import TARGET, hot_probability_by_recursion, smallest_meeting_count

pytestmark = pytest.mark.render

# (flows, links): meta-24k's RTSW uplinks healthy and with a CTSW down, its CTSW-ATSW stage, the small
# example's CTSW-ATSW stage, and shapes of no bundled fabric
SHAPES = [(16, 16), (16, 15), (192, 28), (16, 2), (12, 2), (24, 7), (5, 9)]


@pytest.mark.parametrize(("flows", "links"), SHAPES)
def test_the_exact_probability_is_the_recursions(flows, links):
    from netgen.whatif.ecmp import hot_probability  # noqa: PLC0415

    last = min(ecmp.MAX_QPS, (smallest_meeting_count(flows, links) or 10) + 4)
    for qps in range(1, last + 1):
        assert hot_probability(flows, links, qps) == pytest.approx(
            hot_probability_by_recursion(flows, links, qps), abs=1e-10), qps


@pytest.mark.parametrize(("flows", "links", "qps"), [(16, 15, 29), (16, 15, 30), (16, 16, 33), (192, 28, 6),
                                                     (192, 28, 2), (16, 16, 8)])
def test_the_monte_carlo_agrees_with_the_exact_probability(flows, links, qps):
    """Seeded, so the same draws every run: within 4.5 standard errors of the binomial estimate;
    by the links' loads (a multinomial) where sub-flows outnumber links 30 to 1, else sub-flow by
    sub-flow (the last two)."""
    trials = 20_000
    exact = hot_probability_by_recursion(flows, links, qps)
    sampled = simulate(flows, links, qps, trials, 1).p_hot
    assert abs(sampled - exact) < 4.5 * math.sqrt(exact * (1 - exact) / trials)


@pytest.mark.parametrize(("flows", "links"), SHAPES)
def test_the_recommendation_is_the_smallest_count_under_the_target(flows, links):
    from netgen.whatif.ecmp import recommended_qps  # noqa: PLC0415

    assert recommended_qps(flows, links) == smallest_meeting_count(flows, links)


def test_a_count_under_the_target_before_one_over_it_is_not_skipped():
    """16 flows over 15 links (meta-24k's RTSW uplinks with a CTSW down): the threshold 1.5 x mean is
    rounded up to a whole QP, so P(1.5x) is not monotone in the count, and the next count after the
    smallest one under the target is over it again: a search that assumed monotony, or screened
    with a noisy estimate, could step over it."""
    from netgen.whatif.ecmp import recommended_qps  # noqa: PLC0415

    smallest = smallest_meeting_count(16, 15)
    assert smallest is not None
    assert hot_probability_by_recursion(16, 15, smallest + 1) >= TARGET  # the case is non-monotone
    assert recommended_qps(16, 15) == smallest


def test_every_count_is_tried_in_turn(monkeypatch):
    """A probability under the target at 7 only, then from 90 on: 7, whatever lies between."""
    from netgen.whatif.ecmp import recommended_qps  # noqa: PLC0415

    asked: list[int] = []

    def made_up(flows: int, links: int, qps: int) -> float:
        asked.append(qps)
        return 0.01 if qps == 7 or qps >= 90 else 0.5

    monkeypatch.setattr(ecmp, "hot_probability", made_up)
    assert recommended_qps(16, 16) == 7 and asked == list(range(1, 8))
    asked.clear()
    monkeypatch.setattr(ecmp, "hot_probability", lambda flows, links, qps: asked.append(qps) or 0.5)
    assert recommended_qps(16, 16) is None and asked == list(range(1, ecmp.MAX_QPS + 1))


def test_one_flow_over_many_links_has_no_recommendation():
    from netgen.whatif.ecmp import recommended_qps  # noqa: PLC0415

    assert smallest_meeting_count(1, 64) is None
    assert recommended_qps(1, 64) is None


@pytest.mark.parametrize(("flows", "links", "qps"), [(16, 15, 29), (192, 28, 5), (24, 7, 11)])
def test_the_transform_convolution_gives_the_direct_ones_answer(flows, links, qps, monkeypatch):
    """Large shapes convolve through an FFT: forced here on shapes the direct product handles."""
    monkeypatch.setattr(ecmp, "_DIRECT_CONVOLUTION", 0)
    assert ecmp._exact_hot(flows * qps, links) == pytest.approx(
        hot_probability_by_recursion(flows, links, qps), abs=1e-9)


def test_the_largest_shapes_the_intent_allows_are_computed():
    """4,096 racks x 64 links over 2 CTSW uplinks at 128 QPs: 33.5 million balls, where P is 0 but
    for rounding (which grows with the balls: log-factorials near 6e8 lose digits), and the widest
    RTSW (64 hosts x 32 NICs) over 16,384 links, where P is 1."""
    assert ecmp._exact_hot(4096 * 64 * 128, 2) < 1e-6
    assert ecmp._exact_hot(1 << 20, 64) < 1e-9
    assert ecmp._exact_hot(64 * 32 * 128, 256 * 64) == pytest.approx(1.0, abs=1e-12)


def test_a_warm_cache_recommends_without_numpy(tmp_path):
    """The exact probabilities are kept with the Monte Carlo's results: a command that asked before
    gets its answer without importing numpy."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    code = ("import sys; from netgen.whatif.ecmp import recommended_qps;"
            " print(recommended_qps(16, 15), 'numpy' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    expected = str(smallest_meeting_count(16, 15))
    assert runs == [[expected, "True"], [expected, "False"]]
