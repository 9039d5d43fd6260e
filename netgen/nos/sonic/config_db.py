"""config_db.json built as data from the per-device view, one function per feature (the way pyavd
has one template per feature), serialized once by the renderer. Every value is decided in
view.py; here they are only laid out in SONiC's table / key / field shape (CONFIG_DB holds strings,
so numbers become text here, as SONiC's YANG models type them)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from netgen.nos.sonic.view import SonicView
from netgen.rendered import RenderError

Tables = dict[str, dict[str, Any]]


def device_metadata(v: SonicView) -> Tables:
    return {"DEVICE_METADATA": {"localhost": {
        "hostname": v.hostname, "bgp_asn": str(v.asn), "type": v.device_type, "hwsku": v.hwsku,
        "buffer_model": "traditional", "docker_routing_config_mode": "split-unified",
        "default_pfcwd_status": "disable"}}}


def ports(v: SonicView) -> Tables:
    tables: Tables = {"PORT": {p.name: {"lanes": p.lanes, "alias": p.alias, "index": str(p.index),
                                        "speed": str(p.speed_mbps), "mtu": str(p.mtu), "fec": p.fec,
                                        "admin_status": p.admin_status, "description": p.description}
                               for p in v.ports}}
    if v.buffer_pools is not None:
        # the SKU's buffer tables are in play: cable lengths are netgen's headroom inputs, not SONiC's
        tables["CABLE_LENGTH"] = {"AZURE": dict.fromkeys(v.backend_ports, "0m")}
    return tables


def interfaces(v: SonicView) -> Tables:
    tables: Tables = {"LOOPBACK_INTERFACE": {"Loopback0": {}, **{f"Loopback0|{p}": {} for p in v.loopbacks}}}
    if v.routed:
        tables["INTERFACE"] = {key: {} for name, prefixes in v.routed
                               for key in (name, *(f"{name}|{p}" for p in prefixes))}
    if v.host_vlan:
        vlan = f"Vlan{v.host_vlan}"
        tables["VLAN"] = {vlan: {"vlanid": str(v.host_vlan), "mtu": str(v.mtu)}}
        tables["VLAN_INTERFACE"] = {vlan: {}, **{f"{vlan}|{g}": {} for g in v.host_gateways}}
        tables["VLAN_MEMBER"] = {f"{vlan}|{name}": {"tagging_mode": "untagged"} for name in v.host_members}
    return tables


def qos_maps(v: SonicView) -> Tables:
    name = v.map_name
    per_port = {"dscp_to_tc_map": name, "tc_to_queue_map": name, "tc_to_pg_map": name, "pfc_to_queue_map": name,
                "pfc_enable": v.pfc_enable, "pfcwd_sw_enable": v.pfcwd_enable}
    return {"DSCP_TO_TC_MAP": {name: dict(v.dscp_to_tc)}, "TC_TO_QUEUE_MAP": {name: dict(v.tc_to_queue)},
            "TC_TO_PRIORITY_GROUP_MAP": {name: dict(v.tc_to_pg)},
            "MAP_PFC_PRIORITY_TO_QUEUE": {name: dict(v.pfc_to_queue)},
            "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": name}, **{p: dict(per_port) for p in v.backend_ports}}}


def scheduling(v: SonicView) -> Tables:
    def queue(number: int, scheduler: str) -> dict[str, str]:
        if v.ecn_enabled and number == v.lossless_queue:
            return {"scheduler": scheduler, "wred_profile": v.wred_profile}
        return {"scheduler": scheduler}

    return {"SCHEDULER": {name: dict(fields) for name, fields in v.schedulers.items()},
            "WRED_PROFILE": {v.wred_profile: dict(v.wred)},
            "QUEUE": {f"{port}|{number}": queue(number, scheduler) for port in v.backend_ports
                      for number, scheduler in v.queue_scheduler.items()}}


def buffers(v: SonicView) -> Tables:
    """The switch vendor's SKU pools and profiles and netgen's lossless PG profiles; a SKU that
    ships no buffer tables gets none (the SDK sets them)."""
    if v.buffer_pools is None:
        return {}
    pgs: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    for port in v.backend_ports:
        pgs[f"{port}|0"] = {"profile": "ingress_lossy_profile"}
        if port in v.lossless_profile_of:
            pgs[f"{port}|{v.lossless_pg}"] = {"profile": v.lossless_profile_of[port]}
        queues[f"{port}|{v.lossless_queue}"] = {"profile": "egress_lossless_profile"}
        for lossy in v.lossy_queue_ranges:
            queues[f"{port}|{lossy}"] = {"profile": "egress_lossy_profile"}
    return {"BUFFER_POOL": {name: dict(fields) for name, fields in v.buffer_pools.items()},
            "BUFFER_PROFILE": {p.name: dict(p.fields) for p in v.buffer_profiles},
            "BUFFER_PG": pgs, "BUFFER_QUEUE": queues}


def pfcwd(v: SonicView) -> Tables:
    watchdog: dict[str, Any] = {"GLOBAL": {"POLL_INTERVAL": str(v.pfcwd_poll_ms)}}
    if v.pfcwd:
        watchdog.update({port: dict(v.pfcwd) for port in v.backend_ports})
    return {"PFC_WD": watchdog,
            "FLEX_COUNTER_TABLE": {key: {"FLEX_COUNTER_STATUS": "enable"} for key in v.flex_counters}}


def switch_hash(v: SonicView) -> Tables:
    fields: dict[str, Any] = {"ecmp_hash": list(v.ecmp_hash), "lag_hash": list(v.ecmp_hash)}
    if v.rdma_hash:
        fields |= {"ecmp_hash_ipv4_rdma": list(v.rdma_hash), "ecmp_hash_ipv6_rdma": list(v.rdma_hash)}
    return {"SWITCH_HASH": {"GLOBAL": fields | {"ecmp_hash_algorithm": "CRC", "lag_hash_algorithm": "CRC"}}}


def services(v: SonicView) -> Tables:
    return {table: {key: dict(fields) for key, fields in rows.items()} for table, rows in v.services_db.items()}


FEATURES: tuple[Callable[[SonicView], Tables], ...] = (
    device_metadata, ports, interfaces, qos_maps, scheduling, buffers, pfcwd, switch_hash, services)


def config_db(view: SonicView) -> Tables:
    """The device's CONFIG_DB, every feature's tables; a table two features claim is a netgen bug."""
    tables: Tables = {}
    for feature in FEATURES:
        part = feature(view)
        overlap = tables.keys() & part.keys()
        if overlap:
            raise RenderError(f"{view.hostname}: config_db feature {feature.__name__} repeats tables {sorted(overlap)}")
        tables.update(part)
    return tables


_ORJSON = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
# what json (ensure_ascii) and orjson may write differently: characters outside printable ASCII
# (json escapes DEL and everything above it; orjson writes them as they are)
_NOT_PLAIN = re.compile(r"[^\x20-\x7e\n]")


def serialized(tables: dict[str, Any]) -> str:
    """config_db.json's text: `json.dumps(tables, indent=2, sort_keys=True)` and a newline, byte for
    byte, written by orjson (about ten times faster). json escapes DEL and non-ASCII characters and
    orjson does not, so such text, and anything orjson will not take, goes through json itself."""
    try:
        text = orjson.dumps(tables, option=_ORJSON).decode()
    except TypeError:  # orjson.JSONEncodeError: e.g. a key that is not a string
        text = ""
    if not text or _NOT_PLAIN.search(text):
        text = json.dumps(tables, indent=2, sort_keys=True)
    return text + "\n"


__all__ = ["FEATURES", "config_db", "serialized"]
