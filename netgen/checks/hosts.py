"""NG7xx: the hosts against the switches. `netgen hosts` derives the NIC and NCCL settings from the
fabric's QoS and hashing intent, so they agree by construction; what a site pins in `hosts:` (an
NCCL_IB_TC its jobs already use, DCQCN on or off) and what a switch model cannot do are where the two
sides can still part. Each finding names both sides."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from netgen.checks.base import Finding, devices_text, error, register, warning
from netgen.context import DesignContext
from netgen.hosts.plan import (
    NCCL_CONF_MAX_FIELD,
    hca_names,
    host_qos,
    nccl_environment,
    nic_dscp_settings,
    qps_per_connection,
)
from netgen.intent.fabric import Fabric
from netgen.platforms.features import dscp_to_tc
from netgen.topology.model import Device, Role

if TYPE_CHECKING:
    from netgen.whatif.ecmp import Stage

# Bytes a RoCEv2 packet adds to its payload inside the IP MTU: IPv4 20 + UDP 8 + BTH 12 + ICRC 4
# (InfiniBand Architecture Specification Annex A17 RoCEv2; RETH/AETH extensions ride inside the MTU
# margin the NIC keeps). [inferred: a 4096-byte RoCE MTU needs an IP MTU of at least 4140]
ROCE_OVERHEAD_BYTES = 20 + 8 + 12 + 4


def _models_without(ctx: DesignContext, capability: str) -> Iterator[tuple[Role, str, list[Device]]]:
    """Per tier, the models in use that lack a capability (Capabilities field name), with their devices."""
    for role, model_name, model, devices in ctx.tier_models():
        if not getattr(model.capabilities, capability):
            yield role, model_name, devices


@register
class NcclTrafficIsLossless:
    code: ClassVar[str] = "NG701"
    title: ClassVar[str] = "NCCL's data traffic class is lossless on every switch"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        qos = ctx.fabric.qos
        host = host_qos(ctx.fabric)
        dscp = host.traffic_class >> 2
        if dscp not in qos.lossless.dscp:
            yield error(self.code, "hosts.nccl.traffic_class",
                        f"NCCL_IB_TC {host.traffic_class} is DSCP {dscp}, which is not in the lossless class"
                        f" (DSCP {', '.join(map(str, qos.lossless.dscp))}): RoCE data would be dropped, not paused",
                        f"set hosts.nccl.traffic_class to {qos.lossless.dscp[0] << 2} or drop it (netgen derives it),"
                        f" or add DSCP {dscp} to qos.lossless.dscp")
        for role, model_name, devices in _models_without(ctx, "pfc"):
            yield error(self.code, f"{role.value}/{model_name}",
                        f"NCCL's traffic class is lossless on the hosts but {model_name} does not run PFC"
                        f" ({devices_text(devices)}): the RoCE class is lossy there",
                        "use a model with PFC in this tier")


@register
class CtsIsStrict:
    code: ClassVar[str] = "NG702"
    title: ClassVar[str] = "NCCL's clear-to-send messages ride the strict CTS queue"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        qos = ctx.fabric.qos
        host = host_qos(ctx.fabric)
        dscp = host.fifo_traffic_class >> 2
        if dscp not in qos.cts.dscp:
            where = "the lossless class" if dscp in qos.lossless.dscp else "a lossy DWRR class or the default class"
            yield error(self.code, "hosts.nccl.fifo_traffic_class",
                        f"NCCL_IB_FIFO_TC {host.fifo_traffic_class} is DSCP {dscp}, in {where}, not the strict CTS"
                        f" class (DSCP {', '.join(map(str, qos.cts.dscp))}): clear-to-send waits behind bulk data",
                        f"set hosts.nccl.fifo_traffic_class to {qos.cts.dscp[0] << 2} or drop it")
        if host.fifo_traffic_class & 3 or host.traffic_class & 3:
            yield warning(self.code, "hosts.nccl",
                          "an NCCL traffic class sets the ECN bits (the low two bits of the ToS byte):"
                          " the NIC's congestion control decides ECN capability, not the application",
                          "use a multiple of 4 (DSCP << 2)")


@register
class EcnBothSides:
    code: ClassVar[str] = "NG703"
    title: ClassVar[str] = "DCQCN is on at the NICs exactly when the switches mark ECN"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        fabric = ctx.fabric
        switches = fabric.qos.ecn.enabled
        nics = host_qos(fabric).dcqcn
        if switches != nics:
            side = ("the switches mark ECN but the NICs never react (DCQCN off): marks are wasted and"
                    " congestion is left to PFC" if switches else
                    "the NICs run DCQCN but no switch marks ECN: the reaction point never slows down")
            yield error(self.code, "hosts.dcqcn", side,
                        "set hosts.dcqcn to qos.ecn.enabled, or drop hosts.dcqcn (it then follows the switches)")
        if switches:
            for role, model_name, devices in _models_without(ctx, "ecn"):
                yield error(self.code, f"{role.value}/{model_name}",
                            f"DCQCN is on but {model_name} cannot mark ECN ({devices_text(devices)})",
                            "use a model that marks ECN in this tier, or turn qos.ecn off")


@register
class QpsSpreadOverPaths:
    code: ClassVar[str] = "NG704"
    title: ClassVar[str] = "More QPs per connection only where the switches hash on the QP"


    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        fabric = ctx.fabric
        qps = qps_per_connection(fabric)
        if qps <= 1:
            return
        # A model that cannot hash on the QP where the fabric asks for it is NG501's finding.
        if fabric.hashing.mode != "bth_dest_qp":
            yield warning(self.code, "hashing.mode",
                          f"hosts open {qps} QPs per connection but the switches hash on the 5-tuple only: QPs of"
                          " one connection may share a UDP source port and so one path",
                          "set hashing.mode to bth_dest_qp, or hosts.nccl.qps_per_connection to 1")


@register
class HostMtuFits:
    code: ClassVar[str] = "NG705"
    title: ClassVar[str] = ("Host MTU fits the fabric and carries the RoCE MTU; every rail has an RDMA device"
                            " whose name fits NCCL's config file")

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        fabric = ctx.fabric
        hosts = fabric.hosts
        roce_mtu = fabric.qos.lossless.roce_mtu
        if hosts.mtu > fabric.mtu:
            yield error(self.code, "hosts.mtu",
                        f"host MTU {hosts.mtu} is above the switches' port MTU {fabric.mtu}: large frames are dropped",
                        f"set hosts.mtu to at most {fabric.mtu}")
        if hosts.mtu < roce_mtu + ROCE_OVERHEAD_BYTES:
            yield error(self.code, "hosts.mtu",
                        f"host MTU {hosts.mtu} cannot carry a RoCE packet of {roce_mtu} bytes"
                        f" (+{ROCE_OVERHEAD_BYTES} of headers): the NIC falls back to a smaller RoCE MTU",
                        f"set hosts.mtu to at least {roce_mtu + ROCE_OVERHEAD_BYTES} (9000 is usual)")
        if hosts.hca_names is not None:
            short = [zone for zone in fabric.zones if zone.nics_per_host > len(hosts.hca_names)]
            if short:
                rails = max(zone.nics_per_host for zone in short)
                yield error(self.code, "hosts.hca_names",
                            f"hosts in zone(s) {', '.join(str(z.id) for z in short)} have up to {rails} NICs but"
                            f" hca_names lists {len(hosts.hca_names)}", "list one RDMA device per rail, rail 0 first")
        rails = max(zone.nics_per_host for zone in fabric.zones)
        hca = dict(nccl_environment(fabric, hca_names(fabric, rails), host_qos(fabric)))["NCCL_IB_HCA"]
        if len(hca) > NCCL_CONF_MAX_FIELD:
            yield error(self.code, "hosts.hca_names",
                        f"NCCL_IB_HCA would be {len(hca)} characters; NCCL's config-file reader keeps"
                        f" {NCCL_CONF_MAX_FIELD} of a value (src/misc/param.cc, setEnvFile), so nccl.conf"
                        " would cut the device list", "use shorter RDMA device names")


@register
class EnoughQps:
    code: ClassVar[str] = "NG706"
    title: ClassVar[str] = "Hosts open at least the QPs per connection the ECMP what-if recommends"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        # the what-if's own study (exact P(1.5x), no draws): the count `whatif ecmp` and the report give
        from netgen.whatif.ecmp import HOT, MAX_QPS, TARGET  # noqa: PLC0415
        from netgen.whatif.study import scenarios, study  # noqa: PLC0415

        fabric = ctx.fabric
        if fabric.hashing.mode != "bth_dest_qp":
            return  # the QPs do not reach the hash: NG704
        qps = qps_per_connection(fabric)
        zones = {z.id: z for z in fabric.zones}

        def hashes_on_the_qp(stage: Stage) -> bool:
            """Else these switches hash on the 5-tuple (NG501): the model's premise does not hold."""
            models = {getattr(zones[z], f"{stage.tier}_model") for z in stage.zones}
            return all(ctx.catalog.get(m).capabilities.bth_dest_qp_hash for m in models)

        plan = [(scenario, stage) for scenario, stage in scenarios(fabric) if hashes_on_the_qp(stage)]
        for found in study(plan, (qps,), sampled=False):
            stage, [now], best = found.stage, found.rows, found.recommended
            if now.p_hot < TARGET:
                continue
            advice = (f"{best.qps} QPs keep it under {TARGET:.0%} (P = {best.p_hot_text})" if best
                      else f"no QP count up to {MAX_QPS} keeps it under {TARGET:.0%}")
            yield warning(self.code, stage.name,
                          f"with {qps} QPs per connection, {stage.flows} flows over {stage.links} equal-cost links put"
                          f" {HOT}x the mean load on a link with probability {now.p_hot_text} (ECMP what-if,"
                          f" exact); {advice}",
                          f"set hashing.qps_per_connection (or hosts.nccl.qps_per_connection) to"
                          f" {best.qps if best else MAX_QPS}; `netgen whatif ecmp` shows the figures")


def switch_dscp_priorities(fabric: Fabric) -> dict[int, int]:
    """Every DSCP's 802.1Q priority as the switches have it: the traffic class their DSCP map gives it
    (netgen.platforms.features.dscp_to_tc, the SONiC DSCP_TO_TC_MAP and EOS `qos map dscp` rows),
    except the lossless class, whose traffic class sits on the PFC priority (SONiC
    TC_TO_PRIORITY_GROUP_MAP and pfc_enable, EOS `priority-flow-control priority P no-drop`): a PFC
    frame names a priority, so the NIC must put exactly those DSCPs on it. Every other class keeps its
    traffic class as priority, which the NIC's one-to-one priority-to-TC map turns back into the same
    TC (the CTS one strict on both sides)."""
    lossless = fabric.qos.lossless
    return {dscp: lossless.pfc_priority if tc == lossless.traffic_class else tc
            for dscp, tc in dscp_to_tc(fabric).items()}


@register
class NicDscpMapMatchesSwitches:
    code: ClassVar[str] = "NG707"
    title: ClassVar[str] = "Every DSCP 0-63 has the same priority on the NICs as on the switches"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        fabric = ctx.fabric
        switches = switch_dscp_priorities(fabric)
        for setting in nic_dscp_settings(fabric):
            expected = switches[setting.dscp]
            if setting.priority == expected:
                continue
            paused = fabric.qos.lossless.pfc_priority
            effect = ("; the NIC pauses it with RoCE where the switches treat it as lossy"
                      if setting.priority == paused else
                      "; the switches pause it but a pause does not stop it at the NIC"
                      if expected == paused else "")
            yield error(self.code, f"hosts ({fabric.hosts.nic} NICs)",
                        f"DSCP {setting.dscp} is on priority {setting.priority} at the NIC ({setting.setting})"
                        f" but on priority {expected} at the switches{effect}",
                        "drop the host pin that moves it (hosts.nccl.traffic_class sets Thor2's roce_dscp), or"
                        " put the DSCP in the class the NIC gives it")
