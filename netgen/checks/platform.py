"""NG5xx: features each tier's platform must support."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import DesignContext, Finding, devices_text, error, register, warning


@register
class HashingSupport:
    code: ClassVar[str] = "NG501"
    title: ClassVar[str] = "The hashing mode is supported by every tier's platform"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        hashing = ctx.fabric.hashing
        if hashing.mode != "bth_dest_qp":
            return
        for role, name, model, devices in ctx.tier_models():
            if model.capabilities.bth_dest_qp_hash:
                continue
            subject = f"{role.value} model {name}"
            text = (f"{name} ({model.nos_release}) cannot hash ECMP on the RoCE BTH destination QP"
                    f" ({devices_text(devices)})")
            if hashing.fallback == "five_tuple":
                yield warning(self.code, subject, text + "; it falls back to the 5-tuple hash",
                              "expect less ECMP entropy on this tier, or use a model that has the capability")
            else:
                yield error(self.code, subject, text,
                            "use a model/NOS release with bth_dest_qp_hash, set hashing.fallback: five_tuple,"
                            " or hashing.mode: five_tuple")


@register
class PfcWatchdogSupport:
    code: ClassVar[str] = "NG502"
    title: ClassVar[str] = "PFC watchdog runs only where the platform supports it"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        wd = ctx.fabric.qos.pfc_watchdog
        if not wd.enabled:
            return
        for role, name, model, devices in ctx.tier_models():
            if role.value in wd.tiers and not model.capabilities.pfc_watchdog:
                yield error(self.code, f"{role.value} model {name}",
                            f"PFC watchdog is enabled for {role.value} but {name} ({model.nos_release}) has no"
                            f" confirmed watchdog support ({devices_text(devices)})",
                            f"remove {role.value} from qos.pfc_watchdog.tiers, or use a model with the capability")


@register
class SonicSkuLayout:
    code: ClassVar[str] = "NG503"
    title: ClassVar[str] = "Links on SONiC switches run at the speed of the SKU's port layout"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for role, name, model, devices in ctx.tier_models():
            if model.sonic is None:
                continue
            speeds = {p.speed_gbps for d in devices for p in ctx.topology.ports[d.name]}
            for speed in sorted(speeds - {model.sonic.port_speed}):
                yield error(self.code, f"{role.value} model {name}",
                            f"{speed}G links on {devices_text(devices)}, but SONiC SKU {model.sonic.hwsku} lays"
                            f" every port out at {model.sonic.port_speed}G",
                            f"run this tier at {model.sonic.port_speed}G, or add a catalog model with a SKU"
                            f" whose ports run at {speed}G")
