"""The ECMP study `netgen whatif ecmp`, `netgen report` and NG706 all show: per stage of the fabric,
the figures at the QP counts compared and the recommended QP count (netgen.whatif.ecmp for the
model). One loop (`study`), so the three name the same count from the same estimate: the exact
P(max >= 1.5 x mean), which has no sampling error, below TARGET; the Monte Carlo's figures beside
it (E[max/mean], p99, P(overload)) are drawn with the one budget ecmp.TRIALS unless a caller asks
for another. `ecmp_study` is the whole what-if of a fabric as `netgen whatif ecmp` and the report
show it (netgen.api re-exposes it); NG706 runs `study` alone, on the stages whose switches hash on
the QP, at the configured count."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from netgen.intent.fabric import Fabric
from netgen.topology.model import Device
from netgen.whatif.ecmp import (
    HOT,
    MAX_QPS,
    SEED,
    TARGET,
    TRIALS,
    Result,
    Stage,
    hot_probability,
    recommended_qps,
    shape,
    simulate,
    stages,
)

COMPARED_QPS = (1, 2, 4, 8, 16, 32)  # the counts the report and `whatif ecmp` compare unless told
RULE = (f"the smallest QP count whose P(max >= {HOT}x mean) is below {TARGET:.0%}, every count from 1 to"
        f" {MAX_QPS} computed; P exact (no sampling error, so no interval)")


@dataclass(frozen=True)
class QpFigures:
    qps: int
    p_hot: float  # exact P(max >= 1.5 x mean): what the recommendation rests on
    sampled: Result | None  # the Monte Carlo's figures; None where the caller asked for P(hot) only

    @property
    def p_hot_text(self) -> str:
        return probability_text(self.p_hot)

    def as_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"qps": self.qps, "p_hot": self.p_hot, "p_hot_text": self.p_hot_text}
        if self.sampled is not None:
            figures = self.sampled.as_dict()
            figures["p_hot_sampled"] = figures.pop("p_hot")
            del figures["qps"]
            doc |= figures
        return doc


@dataclass(frozen=True)
class StageStudy:
    scenario: str  # "healthy", or "<device> failed"
    stage: Stage
    rows: tuple[QpFigures, ...]  # the compared counts, in the order asked
    recommended: QpFigures | None  # None: no count up to MAX_QPS meets TARGET

    def as_dict(self) -> dict[str, Any]:
        best = self.recommended
        return {"scenario": self.scenario, "stage": self.stage.name, "flows": self.stage.flows,
                "links": self.stage.links, "results": [row.as_dict() for row in self.rows],
                "recommended_qps": best.qps if best else None, "recommended": best.as_dict() if best else None}


def probability_text(p: float) -> str:
    """p with four decimals, more where four would round it onto the other side of TARGET (0.04996
    is "0.04996", not a "0.0500" that seems to miss a 5 % target it meets)."""
    for digits in range(4, 12):
        text = f"{p:.{digits}f}"
        if (float(text) < TARGET) == (p < TARGET):
            return text
    return repr(p)


def scenarios(fabric: Fabric, failed: Device | None = None) -> list[tuple[str, Stage]]:
    """The fabric's stages, healthy; with a failed device, also the stages its failure changes (the
    others are the healthy ones)."""
    healthy = stages(fabric)
    plan = [("healthy", stage) for stage in healthy]
    if failed is not None:
        same = {shape(stage) for stage in healthy}
        plan += [(f"{failed.name} failed", stage) for stage in stages(fabric, failed) if shape(stage) not in same]
    return plan


def study(plan: Iterable[tuple[str, Stage]], compare: Sequence[int] = COMPARED_QPS, *, sampled: bool = True,
          trials: int = TRIALS, seed: int = SEED, advance: Callable[[], None] | None = None) -> list[StageStudy]:
    """Each (scenario, stage) of `plan` at the QP counts in `compare`, and its recommended count
    (ecmp.recommended_qps); `sampled`: with the Monte Carlo's figures (`trials` draws from `seed`).
    `advance` is called once per count compared and once per recommendation."""
    def figures(stage: Stage, qps: int) -> QpFigures:
        drawn = simulate(stage.flows, stage.links, qps, trials, seed, stage.flow_gbps, stage.link_gbps) \
            if sampled else None
        return QpFigures(qps, hot_probability(stage.flows, stage.links, qps), drawn)

    out = []
    for scenario, stage in plan:
        rows = []
        for qps in compare:
            rows.append(figures(stage, qps))
            if advance is not None:
                advance()
        best = recommended_qps(stage.flows, stage.links)
        if advance is not None:
            advance()
        out.append(StageStudy(scenario, stage, tuple(rows), None if best is None else figures(stage, best)))
    return out


@dataclass(frozen=True)
class EcmpStudy:
    """The ECMP what-if of one fabric: every (scenario, stage) studied, how the sampled figures
    were drawn, and what the hosts are configured with (`configured_qps`, the fabric's hashing mode)."""

    stages: tuple[StageStudy, ...]
    seed: int
    trials: int
    configured_qps: int
    hashing: str

    def as_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "trials": self.trials, "hot_ratio": HOT, "target_p_hot": TARGET,
                "p_hot_method": "exact", "recommendation_rule": RULE, "configured_qps": self.configured_qps,
                "hashing": self.hashing, "stages": [entry.as_dict() for entry in self.stages]}


# a progress display of N steps under a label, as a context that yields the function that advances it
StepProgress = Callable[[int, str], AbstractContextManager[Callable[[], None]]]


@contextlib.contextmanager
def no_progress(_total: int, _label: str) -> Iterator[Callable[[], None]]:
    yield lambda: None


def ecmp_study(fabric: Fabric, configured_qps: int, failed: Device | None = None,
               compare: Sequence[int] = COMPARED_QPS, *, trials: int = TRIALS, seed: int = SEED,
               progress: StepProgress = no_progress) -> EcmpStudy:
    """The fabric's stages, healthy and with `failed` down (scenarios), each at the QP counts in
    `compare` with the Monte Carlo's figures (`trials` draws from `seed`) and its recommended count.
    `configured_qps`: what the hosts open (netgen.hosts.plan.qps_per_connection), shown beside it."""
    plan = scenarios(fabric, failed)
    with progress(len(plan) * (len(compare) + 1), "simulating") as advance:
        found = study(plan, compare, trials=trials, seed=seed, advance=advance)
    return EcmpStudy(tuple(found), seed, trials, configured_qps, fabric.hashing.mode)
