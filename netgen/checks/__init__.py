"""Design checks (NG1xx capacity, NG2xx addressing/ASN, NG3xx QoS, NG4xx buffers, NG5xx platform,
NG6xx custom configuration, NG7xx hosts against switches, NG8xx the InfiniBand alternative).

Importing this package registers every check; `run_checks` runs them all.
"""

from __future__ import annotations

import gc
from pathlib import Path

from netgen.checks import (  # noqa: F401  (registration)
    addressing,
    buffers,
    capacity,
    custom,
    hosts,
    infiniband,
    platform,
    qos,
)
from netgen.checks.base import REGISTRY, DesignCheck, Finding, Severity
from netgen.context import DesignContext
from netgen.intent import LoadedFabric, load_fabric
from netgen.topology import expand

SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1}


def run_checks(ctx: DesignContext, select: set[str] | None = None) -> list[Finding]:
    """Run every registered check (or those whose code is in `select`); errors first."""
    findings: list[Finding] = []
    for code, check in sorted(REGISTRY.items()):
        if select is None or code in select:
            findings.extend(check().run(ctx))
    return sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], f.code))


def load_and_check(path: str | Path, *,
                   kept_to_exit: bool = False) -> tuple[LoadedFabric, DesignContext, list[Finding]]:
    """Load a fabric, expand it and run every check: the start of every command that acts on a
    fabric. Raises NetgenInputError for input errors; design errors come back as findings.

    `kept_to_exit`: the caller holds the fabric until its process ends (a command). Its objects are
    then frozen out of the cyclic collector once expanded (gc.freeze): they are a few hundred
    thousand acyclic objects the collector would otherwise rescan during every later allocation
    burst (figures: docs/developer/benchmarks.md), and render workers
    forked later no longer touch, and so copy, their pages when they collect."""
    loaded = load_fabric(path)
    return (loaded, *check_loaded(loaded, kept_to_exit=kept_to_exit))


def check_loaded(loaded: LoadedFabric, *, kept_to_exit: bool = False) -> tuple[DesignContext, list[Finding]]:
    """load_and_check for a fabric already loaded."""
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    if kept_to_exit:
        gc.freeze()
    return ctx, run_checks(ctx)


__all__ = ["REGISTRY", "DesignCheck", "DesignContext", "Finding", "Severity", "check_loaded", "load_and_check",
           "run_checks"]
