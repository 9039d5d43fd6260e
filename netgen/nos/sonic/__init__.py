"""SONiC: config_db.json built as data and checked against netgen's typed model of SONiC's YANG,
frr.conf from templates/sonic/; a deploy over SONiC's generic config updater with a revert timer;
in the netns lab its own rendered files, and a stand-in for its CLI on `lab up --ssh` routers.

This module is the bundle only (the entry point `sonic` of the group netgen.nos names BUNDLE): it
imports nothing, so registering SONiC costs nothing; each part is imported when a stage asks for it.
"""

from __future__ import annotations

from netgen.registry import NosBundle

BUNDLE = NosBundle(
    name="sonic",
    templates="sonic",
    renderer="netgen.nos.sonic.renderer:RENDERER",
    driver="netgen.nos.sonic.driver:sonic_driver",
    day0="netgen.nos.sonic.day0:day0_files",
    ownership="netgen.nos.sonic.driver:SONIC_OWNERSHIP",
    lab_adapter="netgen.nos.sonic.lab:sonic_facts",
    lab_shim="netgen.nos.sonic.lab_shim:LAB_SHIM",
    custom_parts=("sonic_config_db", "frr"),
    # Community SONiC logs in to bash, which netmiko's `linux` driver handles (netmiko has no plain
    # `sonic` device type: `dell_sonic` drives Dell Enterprise SONiC's Klish CLI, and `edgecore_sonic`
    # is `linux` under another name).
    netmiko_device_type="linux",
    # No Ansible network OS: to Ansible, community SONiC is a Debian host (ssh, `become` for `config`);
    # dellemc.enterprise_sonic targets Dell's Enterprise SONiC, whose CLI and REST API differ.
    ansible_network_os=None,
    containerlab_kind="sonic-vs",
)
