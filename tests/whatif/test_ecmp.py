"""The ECMP what-if's Monte Carlo and exact P(1.5x) against closed-form balls-into-bins answers on
small cases, its reproducibility, and the stages it reads from the fabric."""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys

import pytest

from netgen.intent import load_fabric
from netgen.whatif import ecmp
from netgen.whatif.ecmp import hot_probability, recommended_qps, simulate, stages
from tests.conftest import ROOT, SMALL, run_cli

pytestmark = pytest.mark.render


def _exact(balls: int, bins: int) -> tuple[float, float]:
    """E[max/mean] and P(max >= 1.5 mean) by enumerating every assignment of balls to bins."""
    total = hot = 0.0
    threshold = 1.5 * balls / bins
    for assignment in itertools.product(range(bins), repeat=balls):
        busiest = max(assignment.count(b) for b in range(bins))
        total += busiest * bins / balls
        hot += busiest >= threshold - 1e-9
    count = bins**balls
    return total / count, hot / count


@pytest.mark.parametrize(("flows", "qps", "links"), [(3, 1, 3), (2, 2, 3), (5, 1, 4), (3, 2, 2)])
def test_monte_carlo_matches_enumeration(flows, qps, links):
    expected_ratio, expected_hot = _exact(flows * qps, links)
    found = simulate(flows, qps=qps, links=links, trials=200_000, seed=3)
    assert found.mean_ratio == pytest.approx(expected_ratio, abs=4 * found.stderr + 1e-3)
    assert found.p_hot == pytest.approx(expected_hot, abs=0.005)


@pytest.mark.parametrize(("balls", "bins"), [(4, 4), (8, 16), (16, 16)])
def test_collision_probability_is_the_birthday_product(balls, bins):
    """m balls in K >= m bins never share one with probability prod_{i<m} (1 - i/K); with m = K the
    mean is 1, so a collision is exactly a link at >= 1.5x the mean."""
    no_collision = math.prod(1 - i / bins for i in range(balls))
    found = simulate(balls, links=bins, qps=1, trials=200_000, seed=5)
    if balls == bins:
        assert found.p_hot == pytest.approx(1 - no_collision, abs=0.003)
    else:  # mean 0.5: any link with 1 ball is at 2x the mean
        assert found.p_hot == 1.0


@pytest.mark.parametrize(("flows", "qps", "links"), [(3, 1, 3), (2, 2, 3), (5, 1, 4), (3, 2, 2), (4, 1, 4),
                                                     (7, 1, 3), (9, 1, 2), (1, 1, 1), (2, 3, 4)])
def test_the_exact_probability_is_the_enumerated_one(flows, qps, links):
    assert hot_probability(flows, links, qps) == pytest.approx(_exact(flows * qps, links)[1], abs=1e-12)


@pytest.mark.parametrize(("balls", "bins"), [(4, 4), (8, 8), (16, 16), (28, 28)])
def test_the_exact_probability_is_the_birthday_product(balls, bins):
    assert hot_probability(balls, bins, 1) == pytest.approx(1 - math.prod(1 - i / bins for i in range(balls)),
                                                            abs=1e-12)


def test_only_balls_count_matters_and_the_seed_reproduces():
    a = simulate(16, links=16, qps=4, trials=50_000, seed=11)
    b = simulate(64, links=16, qps=1, trials=50_000, seed=11)
    assert a.mean_ratio == pytest.approx(b.mean_ratio, abs=4 * (a.stderr + b.stderr))
    again = ecmp._draw(16, 16, 4, 50_000, 11, 1.0, 1.0)  # drawn again, not the cached one
    assert again == a


def test_drawing_the_loads_at_once_agrees_with_drawing_every_sub_flow(monkeypatch):
    """1,536 sub-flows over 28 links are drawn as the links' loads (a multinomial); forced to draw
    each sub-flow's link instead, the figures agree within their standard errors."""
    by_loads = ecmp._draw(192, 28, 8, 20_000, 4, 400.0, 400.0)
    monkeypatch.setattr(ecmp, "_MULTINOMIAL_FROM", 10**9)
    by_sub_flows = ecmp._draw(192, 28, 8, 20_000, 4, 400.0, 400.0)
    assert by_loads != by_sub_flows  # two ways, two streams
    assert by_loads.mean_ratio == pytest.approx(by_sub_flows.mean_ratio,
                                                abs=4.5 * math.hypot(by_loads.stderr, by_sub_flows.stderr))
    p = hot_probability(192, 28, 8)
    for drawn in (by_loads, by_sub_flows):
        assert drawn.p_hot == pytest.approx(p, abs=4.5 * math.sqrt(p * (1 - p) / 20_000))


def test_the_recommended_qps_is_the_smallest_under_five_percent():
    best = recommended_qps(16, 16)
    assert best is not None and hot_probability(16, 16, best) < 0.05
    assert all(hot_probability(16, 16, q) >= 0.05 for q in range(1, best))


def test_stages_and_a_failed_ctsw():
    loaded = load_fabric(ROOT / "inventory" / "meta-24k")
    healthy = stages(loaded.fabric)
    assert [(s.name, s.flows, s.links) for s in healthy] == [
        ("zones 1, 2, 3, 4, 5, 6, 7, 8 RTSW uplinks", 16, 16), ("zones 1, 2, 3, 4, 5, 6, 7, 8 CTSW to ATSW", 192, 28)]
    from netgen.topology import expand  # noqa: PLC0415

    topology = expand(loaded.fabric, loaded.catalog)
    failed = stages(loaded.fabric, topology.devices["z03-ctsw07"])
    assert ("zone 3 RTSW uplinks", 16, 15) in [(s.name, s.flows, s.links) for s in failed]


def test_whatif_json_is_reproducible_and_names_the_failed_switch():
    args = ("whatif", "ecmp", str(SMALL), "--qps", "1,4,16", "--trials", "2000", "--seed", "9", "--json")
    first = json.loads(run_cli(*args).stdout)
    assert first == json.loads(run_cli(*args).stdout)
    assert [r["qps"] for r in first["stages"][0]["results"]] == [1, 4, 16]
    failed = json.loads(run_cli(*args, "--fail", "atsw01").stdout)
    assert [s["scenario"] for s in failed["stages"]][-1] == "atsw01 failed"
    assert failed["stages"][-1]["links"] == 1
    bad = run_cli("whatif", "ecmp", str(SMALL), "--fail", "nope01")
    assert bad.exit_code == 2 and "nope01 is not a switch of this fabric" in bad.output


# --- the result cache ------------------------------------------------------------------------------


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache directory, and no result remembered in this process."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _forget_in_process()
    yield tmp_path / "cache" / "netgen"
    _forget_in_process()


def _forget_in_process():
    ecmp._result_store.cache_clear()
    ecmp._remembered.cache_clear()


def test_a_result_comes_back_from_the_cache_without_drawing(fresh_cache, monkeypatch):
    drawn = simulate(12, 8, 3, 500, 7, 400, 400)
    [stored] = fresh_cache.glob("ecmp/ecmp-*.json")
    _forget_in_process()

    def no_draw(*args):
        raise AssertionError(f"drew {args} again")

    monkeypatch.setattr(ecmp, "_draw", no_draw)
    assert simulate(12, 8, 3, 500, 7, 400, 400) == drawn
    assert simulate(flows=12, links=8, qps=3, trials=500, seed=7, flow_gbps=400.0, link_gbps=400) == drawn
    with pytest.raises(AssertionError, match="drew"):
        simulate(12, 8, 3, 500, 8, 400, 400)  # another seed is another result
    assert stored.exists()


def test_a_damaged_or_foreign_cache_is_ignored(fresh_cache):
    expected = simulate(6, 4, 2, 400, 1)
    [stored] = fresh_cache.glob("ecmp/ecmp-*.json")
    for damage in ("{not json", '{"[6, 4, 2, 400, 1, 1.0, 1.0]": [2, "x", 1, 1, 1, 1]}', "[1, 2]",
                   '{"[6, 4, 2, 400, 1, 1.0, 1.0]": [2, 0.5]}'):
        stored.write_text(damage)
        _forget_in_process()
        assert simulate(6, 4, 2, 400, 1) == expected


def test_the_cache_is_per_numpy_release(fresh_cache, monkeypatch):
    simulate(6, 4, 2, 400, 1)
    _forget_in_process()
    real = ecmp.metadata.version
    monkeypatch.setattr(ecmp.metadata, "version", lambda name: "0.0.1" if name == "numpy" else real(name))
    simulate(6, 4, 2, 400, 1)
    assert len(list(fresh_cache.glob("ecmp/ecmp-*.json"))) == 2


def test_an_unwritable_cache_directory_changes_nothing(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    _forget_in_process()
    try:
        assert simulate(6, 4, 2, 400, 1).qps == 2
    finally:
        _forget_in_process()


def test_checks_on_a_warm_cache_do_not_import_numpy(tmp_path):
    """NG706 simulates every command's stages: once they are cached, no command pays numpy's import."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    code = ("import sys; from netgen.checks import load_and_check; load_and_check(sys.argv[1]);"
            " print('numpy' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code, str(SMALL)], env=env, capture_output=True, text=True,
                           check=True).stdout.strip() for _ in range(2)]
    assert runs == ["True", "False"]
