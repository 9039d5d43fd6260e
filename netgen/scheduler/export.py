"""The scheduler exports `netgen scheduler` writes: per format, the scheduler whose release it is
written for and its writer; which release, from the release options given (versions.target).
Requests that cannot be honoured are ValueError with one line naming the option, as the command
line spells it (versions.Scheduler.option)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from netgen.scheduler import kubernetes, slurm, versions
from netgen.scheduler.model import SchedulerTopology
from netgen.scheduler.versions import KUEUE, SLURM, TOPOGRAPH, VOLCANO, Release, Scheduler

# Each format: its scheduler (whose --X-version option sets the release written for) and its writer.
FORMATS: dict[str, tuple[Scheduler, Callable[[SchedulerTopology, Release], str]]] = {
    "slurm": (SLURM, lambda topo, _release: slurm.tree(topo)),  # every release reads the tree alike
    "slurm-block": (SLURM, slurm.blocks), "kueue": (KUEUE, kubernetes.kueue), "volcano": (VOLCANO, kubernetes.volcano),
    "topograph": (TOPOGRAPH, kubernetes.topograph),
}


@dataclass(frozen=True)
class ExportTarget:
    """What a format is written for: its scheduler and the release."""

    fmt: str
    scheduler: Scheduler
    release: Release

    @property
    def version(self) -> str:
        return self.scheduler.show(self.release)


def export_target(fmt: str, given: Mapping[Scheduler, str | None]) -> ExportTarget:
    """The release `fmt` is written for, from the release options `given` (None: not given, the
    oldest supported). A release option of another scheduler is refused, as is a release too old."""
    scheduler, _ = FORMATS[fmt]
    stray = [s.option for s, text in given.items() if text is not None and s is not scheduler]
    if stray:
        raise ValueError(f"{stray[0]} does not apply to --format {fmt}")
    try:
        release = versions.target(scheduler, given.get(scheduler), any_release=fmt == "slurm")
    except ValueError as exc:
        raise ValueError(f"{scheduler.option}: {exc}") from None
    return ExportTarget(fmt, scheduler, release)


def export(topo: SchedulerTopology, target: ExportTarget) -> str:
    """The scheduler's topology file; ValueError (naming the format) for a name the scheduler cannot
    take (a Kubernetes label value)."""
    _, write = FORMATS[target.fmt]
    try:
        return write(topo, target.release)
    except ValueError as exc:
        raise ValueError(f"{target.fmt}: {exc}") from None


__all__ = ["FORMATS", "ExportTarget", "export", "export_target"]
