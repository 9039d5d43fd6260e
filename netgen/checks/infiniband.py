"""NG8xx: the InfiniBand alternative (`infiniband:`). The fat tree is sized from the same zones as the
RoCE fabric (netgen.topology.infiniband); these checks say where the section asks for what the switch
model cannot build, and where the result is not the even fat tree OpenSM's ftree routes best."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import Finding, error, register, warning
from netgen.context import DesignContext
from netgen.topology.infiniband import IbSizingError


@register
class InfinibandFits:
    code: ClassVar[str] = "NG801"
    title: ClassVar[str] = "The InfiniBand fat tree fits the switch model"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        ib = ctx.fabric.infiniband
        if ib is None:
            return
        model = ctx.catalog.infiniband_switches.get(ib.switch_model)
        if model is not None and ib.link_speed > model.port_speed:
            yield error(self.code, "infiniband.link_speed",
                        f"{ib.link_speed}G links on {ib.switch_model}, whose ports run {model.port_speed}G",
                        f"set infiniband.link_speed to {model.port_speed}G or less")
            return
        try:
            _ = ctx.infiniband_sizing
        except IbSizingError as exc:
            yield error(self.code, "infiniband", str(exc), "change the sizing fields of the infiniband: section")


@register
class InfinibandCoreEven:
    code: ClassVar[str] = "NG802"
    title: ClassVar[str] = "Every core switch reaches every spine group"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        try:
            ib = ctx.infiniband_sizing
        except IbSizingError:
            return  # NG801
        if ib is None or not ib.cores:
            return
        for sizing in ib.sizing:
            uplinks = sizing.spines_per_group * sizing.spine_up
            if uplinks < ib.cores * ib.core_links_per_group:
                yield warning(self.code, f"zone {sizing.zone}",
                              f"each spine group of zone {sizing.zone} has {uplinks} core uplinks for {ib.cores}"
                              f" cores x {ib.core_links_per_group}: some cores do not reach it, and traffic"
                              " to it crosses fewer cores than the rest of the fabric",
                              "give the zones the same racks and hosts, or set infiniband.core_oversubscription")


@register
class InfinibandTenantsCoverHosts:
    code: ClassVar[str] = "NG803"
    title: ClassVar[str] = "With tenant partitions, every host is in one"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        ib = ctx.fabric.infiniband
        if ib is None or not ib.partitions:
            return
        covered = {zone for partition in ib.partitions for zone in partition.zones}
        left = [zone.id for zone in ctx.fabric.zones if zone.id not in covered]
        if left:
            yield warning(self.code, "infiniband.partitions",
                          f"zone(s) {', '.join(map(str, left))} are in no tenant partition: with tenants, hosts are"
                          " only limited members of the default partition, so these hosts cannot reach each other",
                          "add the zones to a partition")
