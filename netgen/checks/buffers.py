"""NG4xx: ECN thresholds and buffer budgets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import Finding, devices_text, error, register, warning
from netgen.context import DesignContext
from netgen.intent.types import format_bytes
from netgen.topology.buffers import FROM_REFERENCE, UNPUBLISHED, BufferDomain, tier_buffers
from netgen.topology.model import Device


def _mb(value: int) -> str:
    return f"{value / 1_000_000:.2f}MB"


@register
class EcnThresholdOrder:
    code: ClassVar[str] = "NG401"
    title: ClassVar[str] = "ECN minimum threshold is below the maximum"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        ecn = ctx.fabric.qos.ecn
        if ecn.min_threshold < ecn.max_threshold:
            return
        text = (f"min_threshold {format_bytes(ecn.min_threshold)} is not below max_threshold"
                f" {format_bytes(ecn.max_threshold)}")
        # SONiC switches always carry the WRED profile (ECN off only unbinds it, so `ecnconfig` keeps
        # working) and SONiC's model refuses max < min: any rendered profile must be valid.
        sonic = [d for _, _, model, devices in ctx.tier_models() if model.nos == "sonic" for d in devices]
        if ecn.enabled or sonic:
            where = "" if ecn.enabled else f" (ECN is off, but SONiC switches keep the profile: {devices_text(sonic)})"
            yield error(self.code, "qos.ecn", text + where, "set min_threshold < max_threshold")
        else:
            yield warning(self.code, "qos.ecn", text + " (ECN is off and no switch renders the profile)",
                          "set min_threshold < max_threshold before enabling ECN")


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
            if plan.source == UNPUBLISHED:
                continue
            limit = min(d.queue_limit(plan.mode, plan.dynamic_th) for d in plan.domains)
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


def _budget_problems(domain: BufferDomain, static: bool) -> list[tuple[str, str]]:
    """(kind, text) of each way this ASIC's plan does not fit, in the vendor's pool semantics."""
    problems = []
    if domain.ingress_committed > domain.buffer_bytes:
        problems.append(("over", f"ingress pool {_mb(domain.pool_bytes)} (shared headroom pool"
                                 f" {_mb(domain.headroom_pool_bytes)} included) + reserved PG sizes"
                                 f" {_mb(domain.reserved_bytes)} = {_mb(domain.ingress_committed)} exceeds the"
                                 f" ASIC's {_mb(domain.buffer_bytes)}"))
    if domain.egress_committed > domain.buffer_bytes:
        problems.append(("over", f"egress pool {_mb(domain.egress_pool_bytes)} + reserved queue sizes"
                                 f" {_mb(domain.egress_reserved_bytes)} = {_mb(domain.egress_committed)} exceeds"
                                 f" the ASIC's {_mb(domain.buffer_bytes)}"))
    room = domain.shared_bytes - domain.reserved_bytes
    if static and domain.static_bytes > room:
        problems.append(("over", f"static partitions {_mb(domain.static_bytes)} for {domain.ports} ports exceed"
                                 f" the {_mb(room)} shared pool"))
    if domain.xoff_bytes > domain.headroom_pool_bytes:
        problems.append(("oversubscribed",
                         f"{domain.lossless_ports} lossless PGs may draw up to {_mb(domain.xoff_bytes)} of headroom"
                         f" from a {_mb(domain.headroom_pool_bytes)} shared headroom pool"
                         f" ({domain.headroom_oversubscription:.2f}:1): only {domain.pgs_covered} of them can fill"
                         " their headroom at once before lossless packets drop"))
    return problems


@register
class BufferBudget:
    code: ClassVar[str] = "NG410"
    title: ClassVar[str] = "Pools, reserved sizes and the shared headroom pool fit each ASIC as the vendor counts them"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        found: dict[tuple[str, str, str, bool], list[Device]] = {}
        for name, plan in ctx.buffers.items():
            if plan.source == UNPUBLISHED:
                continue  # NG507 names the model's unverified buffers
            device = ctx.topology.devices[name]
            for domain in plan.domains:
                for kind, text in _budget_problems(domain, plan.mode == "static_per_port"):
                    key = (device.role.value, f"{text} on {device.model}", kind, plan.source == FROM_REFERENCE)
                    found.setdefault(key, []).append(device)
        for (role, text, kind, reference), devices in found.items():
            unique = list({d.name: d for d in devices}.values())
            if reference:
                yield warning(self.code, devices_text(unique),
                              f"{role.upper()} buffer, counted with the vendor's SONiC settings for this ASIC"
                              f" (the NOS sets its own): {text}",
                              "check the NOS's buffer settings on the device, shorten cables, or use a model"
                              " with more buffer")
            elif kind == "over":
                yield error(self.code, devices_text(unique), f"{role.upper()} buffer over budget: {text}",
                            "lower buffers.<tier>.per_port, or use a model with more buffer")
            else:
                yield warning(self.code, devices_text(unique), f"{role.upper()} shared headroom pool: {text}",
                              "expect drops only if that many PGs pause at once; shorter cables or fewer"
                              " lossless ports per ASIC lower the need")


@register
class HeadroomKnown:
    code: ClassVar[str] = "NG412"
    title: ClassVar[str] = "Every lossless port has a headroom from the vendor's table or formula"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        missing: dict[tuple[str, str, int, int], list[Device]] = {}
        for name, plan in ctx.buffers.items():
            device = ctx.topology.devices[name]
            for pg in plan.lossless.values():
                if pg.computed_xoff is None and pg.vendor_xoff is None:
                    missing.setdefault((device.role.value, device.model, pg.speed_gbps, pg.cable_m), []).append(device)
        for (role, model, speed, cable), devices in missing.items():
            yield error(self.code, f"{role} model {model}",
                        f"no PFC headroom is known for {speed}G over {cable} m on {model}: the vendor's table"
                        f" stops short of it and its ASIC family has no headroom formula ({devices_text(devices)})",
                        "use cables the vendor's table covers, or add a headroom formula for the family in a"
                        " catalog file")


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
