"""ECMP what-if: how evenly a tier's equal-cost links carry a collective's flows, by QP count.

Model (balls into bins; Raab & Steger, RANDOM 1998): N equal flows leave a switch over K equal-cost
links; NCCL splits each connection over q QPs, and a switch hashing on the BTH destination QP sends
each QP's packets down a link of its own, uniformly at random and independently of the others. A
synchronous collective runs at the pace of its busiest link, so max / mean link load is its
slowdown. The stages, from the fabric:

* RTSW uplinks: N = the rack's NICs (every NIC's flow leaves the rack), K = CTSWs x parallel links;
* CTSW to ATSW: N = the RTSW uplinks landing on one CTSW (each carrying one flow out of the zone),
  K = the CTSW's uplinks.

A failed device takes its links out of K (a CTSW: each RTSW of its zone loses its links to it; an
ATSW: each CTSW loses its links to it); the flows stay.

Two estimates. P(max >= 1.5 x mean), which the QP recommendation rests on, is computed exactly
(hot_probability: every link below the threshold, as independent Poisson loads conditioned on
their sum; B. Levin, "A representation for multinomial cumulative distribution functions", Annals
of Statistics 9(5), 1981): no sampling error, only floating-point rounding, which grows with the
sub-flows (log-factorials of their count lose digits) and stays below 1e-9 up to a million of them
(the tests hold it to enumeration, the birthday product and a second exact method within 1e-10).
The rest (E[max/mean] with its standard error, the p99, P(a link asked for more than its line
rate)) comes from a seeded Monte Carlo (numpy's PCG64), the same figures for the same seed on every
machine. The recommendation (recommended_qps) is the smallest q in 1..128 whose exact P(1.5x) is
below TARGET, every q computed: the probability is not monotone in q (the threshold 1.5 x mean is
rounded up to a whole QP, so an odd q can be under the target where q + 1 is not).

Every command's NG706 check needs the fabric's stages, and the same shapes come back run after run:
a result is kept in the user's cache directory ($XDG_CACHE_HOME/netgen/ecmp, else
~/.cache/netgen/ecmp), keyed by its arguments, this module's source, numpy's version (NEP 19: a
Generator's stream may change between numpy releases) and Python's (math.lgamma), so a command whose
stages were computed before neither imports numpy nor draws. A cache that cannot be read or written
is ignored, and so is one that is not the user's own: a folder or file owned by someone else or
writable by others (its numbers would be theirs to choose) is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import stat
import sys
from collections.abc import Callable
from dataclasses import astuple, dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from netgen.intent.fabric import Fabric
from netgen.resources import owned_by_user, user_cache_dir, user_owned_dir
from netgen.topology.expand import links_per_ctsw_atsw
from netgen.topology.model import Device, Role

if TYPE_CHECKING:
    import numpy as np

HOT = 1.5  # a link carrying 1.5x the mean is "hot"
TARGET = 0.05  # recommend the smallest q whose exact P(hot) is below this
MAX_QPS = 128  # NCCL_IB_QPS_PER_CONNECTION's upper bound (NCCL user guide)
TRIALS = 20_000  # the Monte Carlo's one budget: `whatif ecmp`'s default, the report's (NG706 draws none)
SEED = 1
_DRAWS_PER_BATCH = 262_144  # bounds memory (2 MB of draws per batch): trials x flows x q integers
# A trial draws either every sub-flow's link or the links' loads at once, a multinomial (a binomial
# per link, whose cost stops growing with its mean from 30 on, where numpy turns from inversion to
# BTPE): the loads once sub-flows outnumber links by more than this. Both give the balls-into-bins
# distribution exactly.
_MULTINOMIAL_FROM = 30
# Exact P(hot): Poisson terms further than this many standard deviations (plus a margin for small
# means) from the mean weigh under 1e-30 (Chernoff) and are left out; so are convolved terms under
# _NEGLIGIBLE of the largest. Products of lengths above _DIRECT_CONVOLUTION go through an FFT.
_SPREAD_SDS, _SPREAD_MARGIN = 12, 40
_NEGLIGIBLE = 1e-30
_DIRECT_CONVOLUTION = 1 << 24


@dataclass(frozen=True)
class Stage:
    name: str  # e.g. "zone 1 RTSW uplinks"
    flows: int  # N
    links: int  # K
    flow_gbps: int  # one flow's rate (a NIC, or a link below)
    link_gbps: int
    zones: tuple[int, ...] = ()
    tier: str = ""  # the tier whose switches hash this stage: "rtsw" or "ctsw"


@dataclass(frozen=True)
class Result:
    qps: int
    mean_ratio: float  # E[max/mean]
    stderr: float
    p99_ratio: float
    p_hot: float  # P(max >= 1.5 x mean), sampled (hot_probability has it exactly)
    p_overload: float  # P(some link asked for more than its line rate)

    def as_dict(self) -> dict[str, float | int]:
        return {"qps": self.qps, "mean_max_over_mean": round(self.mean_ratio, 4), "stderr": round(self.stderr, 4),
                "p99_max_over_mean": round(self.p99_ratio, 4), "p_hot": round(self.p_hot, 4),
                "p_overload": round(self.p_overload, 4)}


def simulate(flows: int, links: int, qps: int, trials: int, seed: int, flow_gbps: float = 1.0,
             link_gbps: float = 1.0) -> Result:
    """max/mean link load of `flows` x `qps` sub-flows hashed uniformly onto `links` links."""
    if flows < 1 or links < 1 or qps < 1 or trials < 2:
        raise ValueError("flows, links and qps must be at least 1, trials at least 2")
    return _remembered(flows, links, qps, trials, seed, float(flow_gbps), float(link_gbps))


@lru_cache(maxsize=512)
def _remembered(flows: int, links: int, qps: int, trials: int, seed: int, flow_gbps: float,
                link_gbps: float) -> Result:
    args = (flows, links, qps, trials, seed, flow_gbps, link_gbps)
    row = _stored(args, len(Result.__dataclass_fields__), lambda: astuple(_draw(*args)))
    return Result(int(row[0]), *row[1:])


def _stored(args: tuple[int | float | str, ...], width: int, compute: Callable[[], tuple[float, ...]]
            ) -> tuple[float, ...]:
    """compute()'s numbers for `args`, from the user's cache where it has them (a row of `width`)."""
    store = _result_store()
    found = store.get(args, width) if store is not None else None
    if found is None:
        found = compute()
        if store is not None:
            store.put(args, found)
    return found


def hot_threshold(balls: int, links: int) -> int:
    """The smallest whole load at or above HOT x the mean (balls / links), in exact arithmetic."""
    ratio = Fraction(HOT) * balls / links
    return -(-ratio.numerator // ratio.denominator)


def _draw(flows: int, links: int, qps: int, trials: int, seed: int, flow_gbps: float,
          link_gbps: float) -> Result:
    import numpy as np  # noqa: PLC0415  (only when a result is not in the cache)

    rng = np.random.Generator(np.random.PCG64(seed))
    balls = flows * qps
    threshold = hot_threshold(balls, links)
    by_loads = balls > _MULTINOMIAL_FROM * links
    batch = max(1, _DRAWS_PER_BATCH // (links if by_loads else balls))
    ratios: list[np.ndarray] = []
    hot = overload = 0
    done = 0
    while done < trials:
        n = min(batch, trials - done)
        if by_loads:
            counts = rng.multinomial(balls, np.full(links, 1 / links), size=n)
        else:
            draws = rng.integers(0, links, size=(n, balls))
            draws += np.arange(n)[:, None] * links
            counts = np.bincount(draws.ravel(), minlength=n * links).reshape(n, links)
        busiest = counts.max(axis=1)
        ratios.append(busiest * links / balls)
        hot += int(np.count_nonzero(busiest >= threshold))
        overload += int(np.count_nonzero(busiest * (flow_gbps / qps) > link_gbps + 1e-9))
        done += n
    ratio = np.concatenate(ratios)
    return Result(qps, float(ratio.mean()), float(ratio.std(ddof=1) / math.sqrt(trials)),
                  float(np.quantile(ratio, 0.99)), hot / trials, overload / trials)


@lru_cache(maxsize=1)
def _result_store() -> _ResultStore | None:
    """The store for this code, numpy and Python, or None where there is no cache directory or numpy, or
    the folder is not the user's own and private (resources.user_owned_dir)."""
    cache = user_cache_dir()
    try:
        digest = hashlib.sha256(Path(__file__).read_bytes() + metadata.version("numpy").encode()
                                + sys.version.encode())
    except (OSError, metadata.PackageNotFoundError):
        return None
    folder = None if cache is None else user_owned_dir(cache / "ecmp", private=True)
    return None if folder is None else _ResultStore(folder / f"ecmp-{digest.hexdigest()[:24]}.json")


CACHE_ENTRIES = 4096  # a full cache starts over: a fabric shape takes a few dozen (an exact P per QP count tried)
CACHE_LIMIT = 4 << 20  # bytes; a full cache is under 1 MB, a larger file is not one this module wrote


class _ResultStore:
    """Results of _draw and _exact_hot in one JSON file per (this module's source, numpy's and Python's
    versions): {"args": [numbers]}.
    Read once per process; a new result is merged into what the file holds by then and the file
    replaced by a rename, so concurrent commands at worst each lose the other's new entries. The
    file is read only when it is a regular file of the user's own that no one else can write
    (opened without following a link, then checked), else it is a miss."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results = self._read()

    def _read(self) -> dict[str, tuple[float, ...]]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                if not owned_by_user(os.fstat(fd), stat.S_IFREG, private=False):
                    return {}
                data = fh.read(CACHE_LIMIT + 1)
            if len(data) > CACHE_LIMIT:
                return {}
            doc = json.loads(data)
            return {key: tuple(map(float, row)) for key, row in doc.items() if isinstance(row, list)}
        except (OSError, ValueError, TypeError, AttributeError):
            return {}

    def get(self, args: tuple[int | float | str, ...], width: int) -> tuple[float, ...] | None:
        found = self.results.get(json.dumps(args))
        return found if found is not None and len(found) == width else None

    def put(self, args: tuple[int | float | str, ...], result: tuple[float, ...]) -> None:
        merged = self._read()
        if len(merged) >= CACHE_ENTRIES:
            merged = {}
        merged[json.dumps(args)] = result
        self.results.update(merged)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}-{secrets.token_hex(4)}")
        data = json.dumps(merged).encode()
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()


def hot_probability(flows: int, links: int, qps: int) -> float:
    """P(max >= 1.5 x mean), exactly: `flows` x `qps` sub-flows hashed uniformly onto `links` links."""
    if flows < 1 or links < 1 or qps < 1:
        raise ValueError("flows, links and qps must be at least 1")
    return _remembered_hot(flows * qps, links)


@lru_cache(maxsize=4096)
def _remembered_hot(balls: int, links: int) -> float:
    return _stored(("p_hot", balls, links), 1, lambda: (_exact_hot(balls, links),))[0]


def _exact_hot(balls: int, links: int) -> float:
    """1 - P(every link below the threshold t). Levin's representation: with X_1..X_K independent
    Poisson(m/K), P(all < t) = P(X < t)^K x P(S = m) / P(Poisson(m) = m), where S sums K loads drawn
    from X given X < t; S's distribution is that conditional one convolved K times."""
    import numpy as np  # noqa: PLC0415  (only when a result is not in the cache)

    threshold = hot_threshold(balls, links)
    if threshold > balls:
        return 0.0  # one link: it carries the mean
    mean = balls / links
    spread = _SPREAD_SDS * math.sqrt(mean) + _SPREAD_MARGIN
    low, high = max(0, math.floor(mean - spread)), min(threshold - 1, math.ceil(mean + spread))
    log_mean = math.log(mean)
    log_terms = np.array([k * log_mean - mean - math.lgamma(k + 1) for k in range(low, high + 1)])
    peak = float(log_terms.max())
    terms = np.exp(log_terms - peak)
    log_below = peak + math.log(float(terms.sum()))  # log P(X < t)
    total, offset = _convolution_power(terms / terms.sum(), low, links)
    index = balls - offset
    if not 0 <= index < len(total) or total[index] <= 0:
        return 1.0  # no way to place every ball below t
    log_poisson_at_mean = balls * math.log(balls) - balls - math.lgamma(balls + 1)
    log_all_below = links * log_below + math.log(float(total[index])) - log_poisson_at_mean
    return min(1.0, max(0.0, -math.expm1(log_all_below)))


def _convolution_power(pmf: np.ndarray, offset: int, times: int) -> tuple[np.ndarray, int]:
    """The distribution of the sum of `times` independent draws from `pmf` (whose first entry is the
    value `offset`), and the value its first entry stands for; by squaring."""
    result: tuple[np.ndarray, int] | None = None
    while True:
        if times & 1:
            result = (pmf, offset) if result is None else _trimmed(_convolve(result[0], pmf), result[1] + offset)
        times >>= 1
        if not times:
            assert result is not None  # times >= 1
            return result
        pmf, offset = _trimmed(_convolve(pmf, pmf), 2 * offset)


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    import numpy as np  # noqa: PLC0415

    if len(a) * len(b) <= _DIRECT_CONVOLUTION:
        return np.convolve(a, b)
    size = len(a) + len(b) - 1
    padded = 1 << (size - 1).bit_length()
    product = np.fft.irfft(np.fft.rfft(a, padded) * np.fft.rfft(b, padded), padded)[:size]
    return np.maximum(product, 0.0)  # the transform's rounding leaves tiny negatives in the tails


def _trimmed(pmf: np.ndarray, offset: int) -> tuple[np.ndarray, int]:
    """`pmf` without its negligible ends (under _NEGLIGIBLE of its largest term), and its new offset."""
    import numpy as np  # noqa: PLC0415

    kept = np.flatnonzero(pmf > pmf.max() * _NEGLIGIBLE)
    return pmf[kept[0]:kept[-1] + 1], offset + int(kept[0])


def recommended_qps(flows: int, links: int) -> int | None:
    """The smallest q in 1..MAX_QPS whose exact P(hot) is below TARGET; None if none is. Every q is
    computed in turn: P(hot) is not monotone in q, so neither a bisection nor a coarser screen could
    be trusted not to step over the smallest."""
    return next((q for q in range(1, MAX_QPS + 1) if hot_probability(flows, links, q) < TARGET), None)


def _zones_text(ids: list[int]) -> str:
    return f"zone {ids[0]}" if len(ids) == 1 else "zones " + ", ".join(map(str, ids))


def stages(fabric: Fabric, failed: Device | None = None) -> list[Stage]:
    """The fabric's distinct ECMP stages: zones of the same shape share one stage."""
    rtsw: dict[tuple[int, int, int, int], list[int]] = {}
    for zone in fabric.zones:
        links = zone.ctsw_count * zone.links_per_rtsw_ctsw
        if failed is not None and failed.role is Role.CTSW and failed.zone == zone.id:
            links -= zone.links_per_rtsw_ctsw
        rtsw.setdefault((zone.hosts_per_rack * zone.nics_per_host, links, zone.nic_speed, zone.fabric_link_speed),
                        []).append(zone.id)
    out = [Stage(f"{_zones_text(ids)} RTSW uplinks", *shape, tuple(ids), "rtsw") for shape, ids in rtsw.items()]
    agg = fabric.aggregation
    if agg is not None:
        ctsw: dict[tuple[int, int, int, int], list[int]] = {}
        for zone in fabric.zones:
            links = agg.uplinks_per_ctsw
            if failed is not None and failed.role is Role.ATSW:
                links -= links_per_ctsw_atsw(agg)
            ctsw.setdefault((zone.racks * zone.links_per_rtsw_ctsw, links, zone.fabric_link_speed, agg.link_speed),
                            []).append(zone.id)
        out += [Stage(f"{_zones_text(ids)} CTSW to ATSW", *shape, tuple(ids), "ctsw") for shape, ids in ctsw.items()]
    return [s for s in out if s.links >= 1]


def shape(stage: Stage) -> tuple[int, int, int, int]:
    return stage.flows, stage.links, stage.flow_gbps, stage.link_gbps
