"""Design checks (NG1xx capacity, NG2xx addressing/ASN, NG3xx QoS, NG4xx buffers, NG5xx platform).

Importing this package registers every check; `run_checks` runs them all.
"""

from __future__ import annotations

from netgen.checks import addressing, buffers, capacity, platform, qos  # noqa: F401  (registration)
from netgen.checks.base import REGISTRY, DesignCheck, DesignContext, Finding, Severity

SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1}


def run_checks(ctx: DesignContext, select: set[str] | None = None) -> list[Finding]:
    """Run every registered check (or those whose code is in `select`); errors first."""
    findings: list[Finding] = []
    for code, check in sorted(REGISTRY.items()):
        if select is None or code in select:
            findings.extend(check().run(ctx))
    return sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], f.code))


__all__ = ["REGISTRY", "DesignCheck", "DesignContext", "Finding", "Severity", "run_checks"]
