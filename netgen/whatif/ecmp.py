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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from netgen.intent.fabric import Fabric
from netgen.topology.expand import links_per_ctsw_atsw
from netgen.topology.model import Device, Role

HOT = 1.5  # a link carrying 1.5x the mean is "hot"
TARGET = 0.05  # recommend the smallest q with P(hot) below this
MAX_QPS = 128  # NCCL_IB_QPS_PER_CONNECTION's upper bound (NCCL user guide)
_DRAWS_PER_BATCH = 2_000_000  # bounds memory: trials x flows x q integers per batch
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


@lru_cache(maxsize=512)
def simulate(flows: int, links: int, qps: int, trials: int, seed: int, flow_gbps: float = 1.0,
             link_gbps: float = 1.0) -> Result:
    """max/mean link load of `flows` x `qps` sub-flows hashed uniformly onto `links` links."""
    if flows < 1 or links < 1 or qps < 1 or trials < 2:
        raise ValueError("flows, links and qps must be at least 1, trials at least 2")
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


def recommend(stage: Stage, trials: int, seed: int) -> Result | None:
    """The smallest q (1..128) with P(hot) below 5%: doubling q until it holds, then bisecting
    between the last two (P(hot) falls as q grows); None if even 128 QPs leave it above. The search
    runs SEARCH_TRIALS trials per step; the answer is measured again with `trials`."""
    def hot(q: int, count: int) -> Result:
        return simulate(stage.flows, stage.links, q, count, seed, stage.flow_gbps, stage.link_gbps)

    search = min(trials, SEARCH_TRIALS)
    q = 1
    while hot(q, search).p_hot >= TARGET:
        if q == MAX_QPS:
            return None
        q = min(2 * q, MAX_QPS)
    low, high = q // 2 + 1, q
    while low < high:
        mid = (low + high) // 2
        if hot(mid, search).p_hot < TARGET:
            high = mid
        else:
            low = mid + 1
    return hot(low, trials)


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
