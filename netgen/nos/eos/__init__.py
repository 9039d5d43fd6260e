"""Arista EOS: one running-config per device from templates/eos/, checked for the shape EOS
accepts; a deploy through EOS config sessions with a commit timer; in the netns lab an FRR
stand-in rendered from the same view (no EOS CLI runs there), cEOS under containerlab.

This module is the bundle only (the entry point `eos` of the group netgen.nos names BUNDLE): it
imports nothing, so registering EOS costs nothing; each part is imported when a stage asks for it.
"""

from __future__ import annotations

from netgen.registry import NosBundle

BUNDLE = NosBundle(
    name="eos",
    templates="eos",
    renderer="netgen.nos.eos.renderer:RENDERER",
    driver="netgen.nos.eos.driver:eos_driver",
    day0="netgen.nos.eos.day0:day0_files",
    ownership="netgen.nos.eos.driver:EOS_OWNERSHIP",
    lab_adapter="netgen.nos.eos.lab:eos_facts",
    custom_parts=("eos_cli",),
    netmiko_device_type="arista_eos",
    # the arista.eos collection's documented value, with ansible.netcommon.network_cli
    ansible_network_os="arista.eos.eos",
    containerlab_kind="arista_ceos",
)
