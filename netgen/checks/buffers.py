"""NG4xx: ECN thresholds and buffer budgets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import DesignContext, Finding, devices_text, error, register, warning
from netgen.intent.types import format_bytes
from netgen.topology.buffers import tier_buffers
from netgen.topology.model import Device

SHARED_HEADROOM_WARN = 0.5  # headroom above half the buffer leaves little shared pool


def _mb(value: int) -> str:
    return f"{value / 1_000_000:.2f}MB"


@register
class EcnThresholdOrder:
    code: ClassVar[str] = "NG401"
    title: ClassVar[str] = "ECN minimum threshold is below the maximum"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        ecn = ctx.fabric.qos.ecn
        if ecn.min_threshold >= ecn.max_threshold:
            make = error if ecn.enabled else warning
            yield make(self.code, "qos.ecn",
                       f"min_threshold {format_bytes(ecn.min_threshold)} is not below max_threshold"
                       f" {format_bytes(ecn.max_threshold)}",
                       "set min_threshold < max_threshold")


@register
class EcnWithinBuffer:
    code: ClassVar[str] = "NG402"
    title: ClassVar[str] = "ECN maximum threshold fits the buffer a lossless queue can use"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        ecn = ctx.fabric.qos.ecn
        if not ecn.enabled:
            return
        failing: dict[str, list[Device]] = {}
        limit_of: dict[str, int] = {}
        for name, plan in ctx.buffers.items():
            policy = tier_buffers(ctx.fabric, ctx.topology.devices[name].role)
            limit = plan.worst.queue_limit(plan.mode, policy.dynamic_th)
            if ecn.max_threshold > limit:
                key = ctx.topology.devices[name].model
                failing.setdefault(key, []).append(ctx.topology.devices[name])
                limit_of[key] = min(limit, limit_of.get(key, limit))
        for model, devices in failing.items():
            yield error(self.code, devices_text(devices),
                        f"ECN max_threshold {format_bytes(ecn.max_threshold)} exceeds the"
                        f" {_mb(limit_of[model])} a lossless queue can hold on {model}: it would never mark",
                        f"lower qos.ecn.max_threshold below {_mb(limit_of[model])}, or raise"
                        " buffers.<tier>.dynamic_th / per_port")


@register
class EcnSupport:
    code: ClassVar[str] = "NG403"
    title: ClassVar[str] = "ECN marking is supported where DCQCN is enabled"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        if not ctx.fabric.qos.ecn.enabled:
            return
        for role, name, model, devices in ctx.tier_models():
            if not model.capabilities.ecn:
                yield error(self.code, f"{role.value} model {name}",
                            f"ECN is enabled but {name} cannot mark ECN ({devices_text(devices)})",
                            "disable qos.ecn or use a model with ECN")


@register
class BufferBudget:
    code: ClassVar[str] = "NG410"
    title: ClassVar[str] = "Headroom x lossless PGs x ports + static partitions fit each ASIC buffer"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        over: dict[tuple[str, str], list[Device]] = {}
        tight: dict[tuple[str, str], list[Device]] = {}
        for name, plan in ctx.buffers.items():
            device = ctx.topology.devices[name]
            domain = plan.worst
            text = (f"headroom {_mb(domain.headroom_bytes)} for {domain.lossless_ports} lossless ports"
                    + (f" + static {_mb(domain.static_bytes)}" if domain.static_bytes else "")
                    + f" = {_mb(domain.committed)} of {_mb(domain.buffer_bytes)} on {device.model}")
            if domain.committed > domain.buffer_bytes:
                over.setdefault((device.role.value, text), []).append(device)
            elif plan.mode == "shared" and domain.headroom_bytes > SHARED_HEADROOM_WARN * domain.buffer_bytes:
                tight.setdefault((device.role.value, text), []).append(device)
        for (role, text), devices in over.items():
            yield error(self.code, devices_text(devices), f"{role.upper()} buffer over budget: {text}",
                        "lower buffers.<tier>.per_port, shorten cables, or use a model with more buffer")
        for (role, text), devices in tight.items():
            yield warning(self.code, devices_text(devices),
                          f"{role.upper()} headroom takes over half the buffer: {text}",
                          "expect little shared buffer; consider shorter cables or a deeper-buffer model")


@register
class StaticBufferSupport:
    code: ClassVar[str] = "NG411"
    title: ClassVar[str] = "Static per-port buffers only on platforms that have them"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for role, name, model, devices in ctx.tier_models():
            policy = tier_buffers(ctx.fabric, role)
            if policy.mode == "static_per_port" and not model.capabilities.static_per_port_buffers:
                yield error(self.code, f"{role.value} model {name}",
                            f"buffers.{role.value} is static_per_port but {name} ({model.nos_release}) has no"
                            f" static per-port buffer partition ({devices_text(devices)})",
                            f"set buffers.{role.value}.mode to shared, or use a model with the capability")
