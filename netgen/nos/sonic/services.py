"""The CONFIG_DB tables of the switch's own services, built as data from the services plan.

SONiC keeps the management port (eth0) in the VRF named `mgmt` (MGMT_VRF_CONFIG), and every
service below reaches its servers there. Table and field names: SONiC master's YANG models
(sonic-mgmt_vrf, sonic-mgmt_interface, sonic-ntp, sonic-syslog, sonic-dns, sonic-lldp, sonic-sflow,
sonic-gnmi, sonic-banner, sonic-system-tacacs, sonic-system-radius, sonic-system-aaa, sonic-snmp);
schema.py restates their rules and checks the result.
"""

from __future__ import annotations

from typing import Any

from netgen.platforms.services import Aaa, ServicesPlan

MGMT_PORT, MGMT_VRF = "eth0", "mgmt"


def services_tables(plan: ServicesPlan, backend_ports: list[str]) -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {}
    if plan.address and plan.gateway:
        tables["MGMT_VRF_CONFIG"] = {"vrf_global": {"mgmtVrfEnabled": "true"}}
        # the port itself, which MGMT_INTERFACE refers to (sonic-mgmt_interface.yang leafref)
        tables["MGMT_PORT"] = {MGMT_PORT: {"admin_status": "up", "alias": MGMT_PORT}}
        tables["MGMT_INTERFACE"] = {f"{MGMT_PORT}|{plan.address}": {"gwaddr": plan.gateway}}
    if plan.ntp:
        # dhcp disabled: servers a DHCP lease offers on eth0 would replace the intent's
        tables["NTP"] = {"global": {"vrf": MGMT_VRF, "src_intf": MGMT_PORT, "dhcp": "disabled"}}
        tables["NTP_SERVER"] = {a: {"iburst": "on", "association_type": "server"} for a in plan.ntp}
    if plan.syslog:
        tables["SYSLOG_SERVER"] = {h.address: {"port": str(h.port), "protocol": h.protocol, "vrf": MGMT_VRF}
                                   for h in plan.syslog}
    if plan.dns_servers:
        tables["DNS_NAMESERVER"] = {a: {} for a in plan.dns_servers}
    if plan.dns_domain:
        tables["DNS_OPTIONS"] = {"GLOBAL": {"search": [plan.dns_domain]}}
    if plan.lldp:
        tables["LLDP"] = {"GLOBAL": {"hello_time": str(plan.lldp.hello_s), "multiplier": str(plan.lldp.multiplier)}}
    if plan.sflow:
        # agent id: the loopback, a stable per-switch address; datagrams leave through the VRF
        tables["SFLOW"] = {"global": {"admin_state": "up", "polling_interval": str(plan.sflow.polling_interval_s),
                                      "agent_id": "Loopback0"}}
        tables["SFLOW_COLLECTOR"] = {
            f"collector{n}": {"collector_ip": address, "collector_port": str(port), "collector_vrf": MGMT_VRF}
            for n, (address, port) in enumerate(plan.sflow.collectors, start=1)}
        tables["SFLOW_SESSION"] = {port: {"admin_state": "up", "sample_rate": str(plan.sflow.sample_rate)}
                                   for port in backend_ports}
    if plan.gnmi_port:
        # certificates (GNMI|certs) stay the device's: netgen holds no key material
        tables["GNMI"] = {"gnmi": {"port": str(plan.gnmi_port), "user_auth": "password", "vrf": MGMT_VRF}}
    if plan.banner:
        tables["BANNER_MESSAGE"] = {"global": {"state": "enabled", "login": "\n".join(plan.banner)}}
    if plan.aaa:
        tables.update(aaa_tables(plan.aaa))
    if plan.snmp and plan.address:
        # read-only, authenticated and encrypted (sonic-snmp.yang: Priv needs both types and
        # passwords); the agent listens on the management address in VRF mgmt, since snmpd
        # otherwise serves only the default VRF (SNMP_AGENT_ADDRESS_CONFIG|ip|port|vrf, port ''
        # for the default 161)
        tables["SNMP_USER"] = {u.name: {"SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RO",
                                        "SNMP_USER_AUTH_TYPE": "SHA", "SNMP_USER_AUTH_PASSWORD": u.auth_key,
                                        "SNMP_USER_ENCRYPTION_TYPE": "AES",
                                        "SNMP_USER_ENCRYPTION_PASSWORD": u.priv_key}
                               for u in plan.snmp}
        address = plan.address.split("/", 1)[0]
        tables["SNMP_AGENT_ADDRESS_CONFIG"] = {f"{address}||{MGMT_VRF}": {}}
    return tables


# intent login methods in AAA|authentication.login words (sonic-system-aaa.yang pattern)
SONIC_LOGIN_METHODS = {"tacacs": "tacacs+", "radius": "radius", "local": "local"}


def aaa_tables(aaa: Aaa) -> dict[str, dict[str, Any]]:
    """TACPLUS or RADIUS (the key, a placeholder deploy fills, and the source port), one
    TACPLUS_SERVER or RADIUS_SERVER per server, and AAA|authentication. hostcfgd tries servers by
    `priority`, highest first (sonic-host-services scripts/hostcfgd: sorted(..., key=priority,
    reverse=True), for both), so the first server of the intent gets the highest."""
    tables: dict[str, dict[str, Any]] = {}
    methods = ",".join(SONIC_LOGIN_METHODS[m] for m in aaa.login)
    if aaa.tacacs:
        tables["TACPLUS"] = {"global": {"auth_type": "pap", "timeout": str(aaa.tacacs.timeout_s),
                                        "passkey": aaa.tacacs.key, "src_intf": MGMT_PORT}}
        count = len(aaa.tacacs.servers)
        tables["TACPLUS_SERVER"] = {address: {"priority": str(count - n), "tcp_port": "49", "vrf": MGMT_VRF}
                                    for n, address in enumerate(aaa.tacacs.servers)}
    if aaa.radius:
        # the same order rule: hostcfgd sorts RADIUS servers by priority, highest first
        # (sonic-host-services scripts/hostcfgd); the key once, globally, as for TACACS+
        tables["RADIUS"] = {"global": {"auth_type": "pap", "timeout": str(aaa.radius.timeout_s),
                                       "retransmit": str(aaa.radius.retransmit), "passkey": aaa.radius.key}}
        count = len(aaa.radius.servers)
        tables["RADIUS_SERVER"] = {address: {"priority": str(count - n), "auth_port": "1812", "vrf": MGMT_VRF,
                                             "src_intf": MGMT_PORT}
                                   for n, address in enumerate(aaa.radius.servers)}
    # AAA|authorization stays the default (local): SONiC's `tacacs+` there sends every command to the
    # servers for approval (sonic-system-aaa.yang), more than EOS's `aaa authorization exec`; the
    # privilege level still comes from TACACS+ at login (SONiC's tacplus NSS module).
    tables["AAA"] = {"authentication": {"login": methods}}
    return tables


__all__ = ["MGMT_PORT", "MGMT_VRF", "SONIC_LOGIN_METHODS", "aaa_tables", "services_tables"]
