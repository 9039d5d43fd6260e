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
ATSW: each CTSW loses its links to it); the flows stay. A seeded Monte Carlo (numpy's PCG64) gives
the same figures for the same seed on every machine.

Every command's NG706 check simulates the fabric's stages, and the same shapes come back run after
run: a result is kept in the user's cache directory ($XDG_CACHE_HOME/netgen/ecmp, else
~/.cache/netgen/ecmp), keyed by its arguments, this module's source and numpy's version (NEP 19: a
Generator's stream may change between numpy releases), so a command whose stages were simulated
before neither imports numpy nor draws (0.2 s of meta-24k's checks). A cache that cannot be read or
written is ignored, and so is one that is not the user's own: a folder or file owned by someone
else or writable by others (its numbers would be theirs to choose) is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import stat
from dataclasses import astuple, dataclass
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
TARGET = 0.05  # recommend the smallest q with P(hot) below this
MAX_QPS = 128  # NCCL_IB_QPS_PER_CONNECTION's upper bound (NCCL user guide)
_DRAWS_PER_BATCH = 262_144  # bounds memory (2 MB of draws per batch): trials x flows x q integers
SEARCH_TRIALS = 4_000  # trials per step of the QP search (its answer is then measured with the full count)


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
    p_hot: float  # P(max >= 1.5 x mean)
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
    store = _result_store()
    found = store.get(args) if store is not None else None
    if found is None:
        found = _draw(*args)
        if store is not None:
            store.put(args, found)
    return found


def _draw(flows: int, links: int, qps: int, trials: int, seed: int, flow_gbps: float,
          link_gbps: float) -> Result:
    import numpy as np  # noqa: PLC0415  (0.09 s: only when a result is not in the cache)

    rng = np.random.Generator(np.random.PCG64(seed))
    balls = flows * qps
    batch = max(1, _DRAWS_PER_BATCH // balls)
    ratios: list[np.ndarray] = []
    overload = 0
    done = 0
    while done < trials:
        n = min(batch, trials - done)
        draws = rng.integers(0, links, size=(n, balls))
        draws += np.arange(n)[:, None] * links
        counts = np.bincount(draws.ravel(), minlength=n * links).reshape(n, links)
        busiest = counts.max(axis=1)
        ratios.append(busiest * links / balls)
        overload += int(np.count_nonzero(busiest * (flow_gbps / qps) > link_gbps + 1e-9))
        done += n
    ratio = np.concatenate(ratios)
    return Result(qps, float(ratio.mean()), float(ratio.std(ddof=1) / math.sqrt(trials)),
                  float(np.quantile(ratio, 0.99)), float(np.mean(ratio >= HOT - 1e-9)), overload / trials)


@lru_cache(maxsize=1)
def _result_store() -> _ResultStore | None:
    """The store for this code and numpy, or None where there is no cache directory or numpy, or
    the folder is not the user's own and private (resources.user_owned_dir)."""
    cache = user_cache_dir()
    try:
        digest = hashlib.sha256(Path(__file__).read_bytes() + metadata.version("numpy").encode())
    except (OSError, metadata.PackageNotFoundError):
        return None
    folder = None if cache is None else user_owned_dir(cache / "ecmp", private=True)
    return None if folder is None else _ResultStore(folder / f"ecmp-{digest.hexdigest()[:24]}.json")


CACHE_ENTRIES = 4096  # a full cache starts over: a few hundred bytes per fabric shape
CACHE_LIMIT = 4 << 20  # bytes; a full cache is under 1 MB, a larger file is not one this module wrote


class _ResultStore:
    """Results of _draw in one JSON file per (this module's source, numpy's version): {"args": result}.
    Read once per process; a new result is merged into what the file holds by then and the file
    replaced by a rename, so concurrent commands at worst each lose the other's new entries. The
    file is read only when it is a regular file of the user's own that no one else can write
    (opened without following a link, then checked), else it is a miss."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results = self._read()

    def _read(self) -> dict[str, Result]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                if not owned_by_user(os.fstat(fd), stat.S_IFREG, private=False):
                    return {}
                data = fh.read(CACHE_LIMIT + 1)
            if len(data) > CACHE_LIMIT:
                return {}
            doc = json.loads(data)
            return {key: Result(int(row[0]), *map(float, row[1:])) for key, row in doc.items()
                    if isinstance(row, list) and len(row) == 6}
        except (OSError, ValueError, TypeError, AttributeError):
            return {}

    def get(self, args: tuple[int | float, ...]) -> Result | None:
        return self.results.get(json.dumps(args))

    def put(self, args: tuple[int | float, ...], result: Result) -> None:
        merged = self._read()
        if len(merged) >= CACHE_ENTRIES:
            merged = {}
        merged[json.dumps(args)] = result
        self.results.update(merged)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}-{secrets.token_hex(4)}")
        data = json.dumps({key: astuple(value) for key, value in merged.items()}).encode()
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()


def hot_lower_bound(flows: int, links: int, qps: int) -> float:
    """A closed-form lower bound of P(max >= 1.5 x mean): 1 - (1 - P(Bin(m, 1/K) >= t))^K. Link loads
    are negatively associated (Dubhashi & Ranjan, 1998), so P(every link below t) is at most the
    product of the per-link probabilities. The tail sum stops once its terms no longer count."""
    balls = flows * qps
    threshold = math.ceil(HOT * balls / links - 1e-9)
    p = 1 / links
    if links == 1:
        return 0.0  # one link carries the mean
    log_p, log_q = math.log(p), math.log1p(-p)
    tail = 0.0
    for k in range(threshold, balls + 1):
        term = math.exp(math.lgamma(balls + 1) - math.lgamma(k + 1) - math.lgamma(balls - k + 1)
                        + k * log_p + (balls - k) * log_q)
        tail += term
        if term < 1e-15 * max(tail, 1e-300) and k > balls * p:
            break
    return 1 - (1 - min(tail, 1.0)) ** links


def recommend(stage: Stage, trials: int, seed: int) -> Result | None:
    """The smallest q (1..128) whose simulated P(hot) is below 5%; None if even 128 leave it above.
    No q whose lower bound is at or above 5% can do (hot_lower_bound), so the search starts at the
    smallest q the bound allows and steps up, simulating each with SEARCH_TRIALS trials; the answer
    is measured again with `trials`."""
    def bound_ok(q: int) -> bool:
        return hot_lower_bound(stage.flows, stage.links, q) < TARGET

    if not bound_ok(MAX_QPS):
        return None
    low, high = 1, MAX_QPS
    while low < high:  # the bound falls with q (but for rounding at the threshold: checked below)
        mid = (low + high) // 2
        if bound_ok(mid):
            high = mid
        else:
            low = mid + 1
    while low > 1 and bound_ok(low - 1):
        low -= 1
    search = min(trials, SEARCH_TRIALS)
    for q in range(low, MAX_QPS + 1):
        if bound_ok(q) and simulate(stage.flows, stage.links, q, search, seed, stage.flow_gbps,
                                    stage.link_gbps).p_hot < TARGET:
            return simulate(stage.flows, stage.links, q, trials, seed, stage.flow_gbps, stage.link_gbps)
    return None


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
