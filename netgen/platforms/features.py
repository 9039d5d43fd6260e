"""Fabric-wide QoS and feature decisions every NOS view shares, made once here: which DSCP lands
in which traffic class and queue, and whether a device runs the PFC watchdog or QP hashing."""

from __future__ import annotations

from netgen.intent.catalog import PlatformModel
from netgen.intent.fabric import Fabric
from netgen.topology.model import Device


def class_rows(fabric: Fabric) -> list[tuple[list[int], int, int]]:
    """(DSCP values, traffic class, queue) of every class: lossless, CTS, then the lossy ones."""
    qos = fabric.qos
    return [(qos.lossless.dscp, qos.lossless.traffic_class, qos.lossless.queue),
            (qos.cts.dscp, qos.cts.traffic_class, qos.cts.queue),
            *[(c.dscp, c.traffic_class, c.queue) for c in qos.classes]]


def dscp_to_tc(fabric: Fabric) -> dict[int, int]:
    """All 64 DSCP values: listed ones to their class, the rest to the default traffic class."""
    mapping = dict.fromkeys(range(64), fabric.qos.default_traffic_class)
    for dscps, tc, _ in class_rows(fabric):
        for dscp in dscps:
            mapping[dscp] = tc
    return mapping


def tc_to_queue(fabric: Fabric) -> dict[int, int]:
    return dict(sorted((tc, queue) for _, tc, queue in class_rows(fabric)))


def runs_pfc_watchdog(fabric: Fabric, model: PlatformModel, device: Device) -> bool:
    wd = fabric.qos.pfc_watchdog
    return wd.enabled and device.role.value in wd.tiers and model.capabilities.pfc_watchdog


def hashes_on_qp(fabric: Fabric, model: PlatformModel) -> bool:
    """BTH dest-QP hashing is rendered only where the model's release can do it (NG501 otherwise)."""
    return fabric.hashing.mode == "bth_dest_qp" and model.capabilities.bth_dest_qp_hash
