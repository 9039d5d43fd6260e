"""NG5xx: features each tier's platform must support."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import Finding, devices_text, error, register, warning
from netgen.context import DesignContext


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


SONIC_PFC_QUEUE_MAX = 7  # MAP_PFC_PRIORITY_TO_QUEUE qindex pattern [0-7]
SONIC_TC_QUEUE_MAX = 9  # TC_TO_QUEUE_MAP qindex pattern [0-9]


@register
class SonicQueueIndexes:
    code: ClassVar[str] = "NG504"
    title: ClassVar[str] = "Queues fit SONiC's map tables (PFC queue 0-7, class queues 0-9)"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        qos = ctx.fabric.qos
        classes = [(qos.lossless.name, qos.lossless.queue), (qos.cts.name, qos.cts.queue),
                   *[(c.name, c.queue) for c in qos.classes]]
        for role, name, model, devices in ctx.tier_models():
            if model.nos != "sonic":
                continue
            subject = f"{role.value} model {name}"
            if qos.lossless.queue > SONIC_PFC_QUEUE_MAX:
                yield error(self.code, subject,
                            f"lossless queue {qos.lossless.queue} cannot be a PFC queue on SONiC"
                            f" (MAP_PFC_PRIORITY_TO_QUEUE takes 0-{SONIC_PFC_QUEUE_MAX}; {devices_text(devices)})",
                            f"set qos.lossless.queue to {SONIC_PFC_QUEUE_MAX} or lower")
            for label, queue in classes:
                if queue > SONIC_TC_QUEUE_MAX:
                    yield error(self.code, subject,
                                f"class '{label}' uses queue {queue}; SONiC's TC_TO_QUEUE_MAP takes"
                                f" 0-{SONIC_TC_QUEUE_MAX} ({devices_text(devices)})",
                                f"use a queue of {SONIC_TC_QUEUE_MAX} or lower for '{label}'")


@register
class EosWatchdogAction:
    code: ClassVar[str] = "NG505"
    title: ClassVar[str] = "PFC watchdog action is one EOS is known to take"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        wd = ctx.fabric.qos.pfc_watchdog
        if not wd.enabled or wd.action == "drop":
            return
        for role, name, model, devices in ctx.tier_models():
            if model.nos == "eos" and role.value in wd.tiers and model.capabilities.pfc_watchdog:
                yield error(self.code, f"{role.value} model {name}",
                            f"PFC watchdog action '{wd.action}' on EOS ({devices_text(devices)}): only `drop` is"
                            " confirmed for `priority-flow-control pause watchdog action`",
                            "set qos.pfc_watchdog.action: drop, or leave this tier out of qos.pfc_watchdog.tiers")


EOS_WATCHDOG_STEP_MS = 10  # timeout / recovery-time take 2 decimal places of a second (AVD's EOS schema)


@register
class EosWatchdogTimers:
    code: ClassVar[str] = "NG506"
    title: ClassVar[str] = "PFC watchdog timeout and recovery fit EOS's 10 ms steps"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        wd = ctx.fabric.qos.pfc_watchdog
        if not wd.enabled:
            return
        odd = [(label, ms) for label, ms in (("detection_time_ms", wd.detection_time_ms),
                                             ("restoration_time_ms", wd.restoration_time_ms))
               if ms % EOS_WATCHDOG_STEP_MS]
        if not odd:
            return
        for role, name, model, devices in ctx.tier_models():
            if model.nos == "eos" and role.value in wd.tiers and model.capabilities.pfc_watchdog:
                for label, ms in odd:
                    yield error(self.code, f"{role.value} model {name}",
                                f"qos.pfc_watchdog.{label} {ms} ms on EOS ({devices_text(devices)}): EOS takes the"
                                f" watchdog timeout and recovery time in steps of {EOS_WATCHDOG_STEP_MS} ms"
                                " (two decimal places of a second), so it would refuse the line",
                                f"use a multiple of {EOS_WATCHDOG_STEP_MS} ms, e.g."
                                f" {ms // EOS_WATCHDOG_STEP_MS * EOS_WATCHDOG_STEP_MS or EOS_WATCHDOG_STEP_MS}")


@register
class UnverifiedPlatformItems:
    code: ClassVar[str] = "NG507"
    title: ClassVar[str] = "What each tier relies on that no public source confirms"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for role, name, model, devices in ctx.tier_models():
            if not model.unverified:
                continue
            items = "; ".join(f"({n}) {item}" for n, item in enumerate(model.unverified, start=1))
            yield warning(self.code, f"{role.value} model {name}",
                          f"{len(model.unverified)} item(s) on {name} ({devices_text(devices)}) have no public"
                          f" source: {items}",
                          "verify each on a device of this model and release, then update the catalog"
                          " (a model of your own with `extends:` can drop the item)")


@register
class SonicManagementVrf:
    code: ClassVar[str] = "NG508"
    title: ClassVar[str] = "SONiC's management VRF is named mgmt"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        network = ctx.fabric.services.management
        if network is None or network.vrf == "mgmt":
            return
        sonic = [d for d in ctx.topology.devices.values() if d.nos == "sonic"]
        if sonic:
            yield error(self.code, "services.management.vrf",
                        f"vrf {network.vrf!r}: SONiC's management VRF is always 'mgmt' (MGMT_VRF_CONFIG turns it"
                        f" on; sonic-mgmt_vrf.yang), and {devices_text(sonic)} run SONiC",
                        "use vrf: mgmt (EOS accepts any name)")


@register
class SonicLocalUsers:
    code: ClassVar[str] = "NG509"
    title: ClassVar[str] = "Local users reach the SONiC switches"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        users = ctx.fabric.services.users
        sonic = [d for d in ctx.topology.devices.values() if d.nos == "sonic"]
        if users and sonic:
            yield warning(self.code, "services.users",
                          f"{len(users)} local user(s) are rendered for EOS only: {devices_text(sonic)} run SONiC,"
                          " whose LOCAL_USER table (sonic-user.yang, revision 2025-06-19) netgen does not render"
                          " yet, so those switches keep the accounts they have",
                          "manage SONiC accounts another way until netgen renders LOCAL_USER")
