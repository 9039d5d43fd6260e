"""NG3xx: QoS consistency (classes, queues, priorities, schedulers, PFC watchdog timers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import Finding, devices_text, error, register
from netgen.context import DesignContext
from netgen.intent.fabric import Qos


def _classes(qos: Qos) -> list[tuple[str, list[int], int, int]]:
    """(label, dscp, traffic class, queue) of every class, lossless and CTS first."""
    rows = [
        (f"lossless class '{qos.lossless.name}'", qos.lossless.dscp, qos.lossless.traffic_class, qos.lossless.queue),
        (f"CTS class '{qos.cts.name}'", qos.cts.dscp, qos.cts.traffic_class, qos.cts.queue),
    ]
    rows += [(f"class '{c.name}'", c.dscp, c.traffic_class, c.queue) for c in qos.classes]
    return rows


@register
class ClassesDistinct:
    code: ClassVar[str] = "NG301"
    title: ClassVar[str] = "Every class has its own traffic class and queue; CTS is not paused by PFC"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        qos = ctx.fabric.qos
        rows = _classes(qos)
        for i, (label_a, _, tc_a, q_a) in enumerate(rows):
            for label_b, _, tc_b, q_b in rows[i + 1:]:
                if tc_a == tc_b:
                    yield error(self.code, "qos", f"{label_a} and {label_b} share traffic class {tc_a}",
                                "give each class its own traffic_class")
                if q_a == q_b:
                    yield error(self.code, "qos", f"{label_a} and {label_b} share queue {q_a}",
                                "give each class its own queue (one scheduler per queue)")
        # Only the lossless class may sit on the PFC priority: any other class there would be
        # paused with it (CTS stalls, lossy traffic becomes lossless and can spread pauses).
        for label, _, tc, _ in rows[1:]:
            if tc == qos.lossless.pfc_priority:
                yield error(self.code, "qos",
                            f"{label} uses traffic class {tc}, which is the PFC priority: it would be paused",
                            "move it to a traffic class that is not PFC-enabled")


@register
class DscpUnique:
    code: ClassVar[str] = "NG302"
    title: ClassVar[str] = "A DSCP value belongs to one class only"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        owner: dict[int, str] = {}
        for label, dscps, _, _ in _classes(ctx.fabric.qos):
            for dscp in dscps:
                if dscp in owner and owner[dscp] != label:
                    yield error(self.code, "qos", f"DSCP {dscp} is in {owner[dscp]} and in {label}",
                                "list each DSCP value in one class only")
                owner.setdefault(dscp, label)


@register
class QueueCount:
    code: ClassVar[str] = "NG303"
    title: ClassVar[str] = "Queues used exist on every platform"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        highest = max(queue for _, _, _, queue in _classes(ctx.fabric.qos))
        for role, name, model, devices in ctx.tier_models():
            if highest >= model.queues:
                yield error(self.code, f"{role.value} model {name}",
                            f"queue {highest} is used but {name} has queues 0-{model.queues - 1}"
                            f" ({devices_text(devices)})",
                            f"use queues below {model.queues}")


@register
class SchedulerWeights:
    code: ClassVar[str] = "NG304"
    title: ClassVar[str] = "DWRR weights of the lossless and lossy classes add up to 100"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        qos = ctx.fabric.qos
        total = qos.lossless.weight + sum(c.weight for c in qos.classes)
        if total != 100:
            parts = [f"{qos.lossless.name} {qos.lossless.weight}"] + [f"{c.name} {c.weight}" for c in qos.classes]
            yield error(self.code, "qos", f"DWRR weights add up to {total} ({', '.join(parts)})",
                        "make the weights add up to 100 (they are bandwidth percentages)")


@register
class LosslessSupport:
    code: ClassVar[str] = "NG305"
    title: ClassVar[str] = "Every platform supports PFC for the lossless class"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for role, name, model, devices in ctx.tier_models():
            if not model.capabilities.pfc or model.max_lossless_priorities < 1:
                yield error(self.code, f"{role.value} model {name}",
                            f"{name} cannot run a lossless (PFC) priority ({devices_text(devices)})",
                            "use a model with PFC for this tier")


@register
class PfcWatchdogTimers:
    code: ClassVar[str] = "NG306"
    title: ClassVar[str] = "PFC watchdog polling is not slower than detection and restoration"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        wd = ctx.fabric.qos.pfc_watchdog
        if not wd.enabled:
            return
        for label, value in (("detection_time_ms", wd.detection_time_ms),
                             ("restoration_time_ms", wd.restoration_time_ms)):
            if wd.polling_interval_ms > value:
                yield error(self.code, "qos.pfc_watchdog",
                            f"polling_interval_ms {wd.polling_interval_ms} > {label} {value}",
                            f"set polling_interval_ms <= {value} (SONiC's YANG rejects it otherwise)")


@register
class DefaultClassSafe:
    code: ClassVar[str] = "NG307"
    title: ClassVar[str] = "Unclassified traffic lands in a lossy, scheduled class"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        qos = ctx.fabric.qos
        default = qos.default_traffic_class
        if default in (qos.lossless.traffic_class, qos.lossless.pfc_priority):
            yield error(self.code, "qos.default_traffic_class",
                        f"default traffic class {default} is the lossless class: any unmarked traffic"
                        " would be PFC-protected and could pause the fabric",
                        "point default_traffic_class at a lossy class")
        elif default == qos.cts.traffic_class:
            yield error(self.code, "qos.default_traffic_class",
                        f"default traffic class {default} is the strict-priority CTS class: unmarked"
                        " bulk traffic would starve every other queue",
                        "point default_traffic_class at a lossy class")
        elif default not in {c.traffic_class for c in qos.classes}:
            yield error(self.code, "qos.default_traffic_class",
                        f"default traffic class {default} belongs to no class, so it has no queue or weight",
                        "add a class with that traffic_class or pick an existing one")


@register
class RoceMtu:
    code: ClassVar[str] = "NG308"
    title: ClassVar[str] = "RoCE MTU fits the fabric MTU"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        roce = ctx.fabric.qos.lossless.roce_mtu
        if roce > ctx.fabric.mtu:
            yield error(self.code, "qos.lossless.roce_mtu",
                        f"roce_mtu {roce} exceeds the fabric mtu {ctx.fabric.mtu}",
                        f"lower roce_mtu to {ctx.fabric.mtu} or less, or raise mtu")
