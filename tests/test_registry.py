"""The NOS register (netgen/registry.py): the NOSes netgen ships come from their entry points and
nothing else; a bundle that does not fit is refused with the NOS, the part and the import path
named; registering a bundle imports no NOS code; and a NOS netgen does not ship (tests/support/
fake_nos/: its folder and its templates) is rendered by `netgen render` once its entry point is
installed, with no line of netgen changed."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import netgen.nos.eos
import netgen.nos.sonic
from netgen.registry import ENTRY_POINT_GROUP, NOS, PARTS, NosBundle, NosRegister, NosRegistryError
from tests.conftest import ROOT, SMALL, run_cli
from tests.support import fake_nos

pytestmark = pytest.mark.render


def _entry(name: str, value: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def _with_entry_points(monkeypatch: pytest.MonkeyPatch, *entries: metadata.EntryPoint) -> None:
    monkeypatch.setattr(metadata, "entry_points", lambda group: [e for e in entries if e.group == group])


# --- what is registered ---------------------------------------------------------------------------


def test_the_register_loads_exactly_the_shipped_noses_from_their_entry_points():
    entries = {e.name: e.value for e in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert entries == {"sonic": "netgen.nos.sonic:BUNDLE", "eos": "netgen.nos.eos:BUNDLE"}
    fresh = NosRegister()
    assert fresh.names() == ["eos", "sonic"]
    assert fresh.bundle("sonic") is netgen.nos.sonic.BUNDLE and fresh.bundle("eos") is netgen.nos.eos.BUNDLE
    assert NOS.names() == ["eos", "sonic"]  # netgen's own register, as the stages see it


def test_every_part_of_the_shipped_bundles_imports_and_is_what_its_stage_takes():
    from netgen.deploy.driver import default_ownership, driver_factory  # noqa: PLC0415
    from netgen.deploy.ownership import Ownership  # noqa: PLC0415
    from netgen.lab.adapters import lab_adapter  # noqa: PLC0415
    from netgen.lab.endpoints import lab_shim  # noqa: PLC0415
    from netgen.platforms.base import renderer  # noqa: PLC0415

    for nos in NOS.names():
        assert renderer(nos).nos == nos
        assert callable(driver_factory(nos)) and isinstance(default_ownership(nos), Ownership)
        assert callable(lab_adapter(nos))
    assert lab_shim("sonic") is not None and lab_shim("eos") is None
    assert NOS.names("lab_shim") == ["sonic"]


def test_loading_the_bundles_imports_no_nos_code():
    code = ("import sys\nfrom netgen.registry import NOS\nprint(NOS.names())\n"
            "print(sorted(m for m in sys.modules if m.startswith(('netgen', 'netmiko', 'pydantic', 'jinja2'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, modules = done.stdout.splitlines()
    assert names == "['eos', 'sonic']"
    assert eval(modules) == ["netgen", "netgen.nos", "netgen.nos.eos", "netgen.nos.sonic", "netgen.registry"]


def test_a_render_imports_the_renderers_and_no_deploy_driver(tmp_path):
    code = ("import sys\nfrom click.testing import CliRunner\nfrom netgen.cli import cli\n"
            f"result = CliRunner().invoke(cli, ['render', {str(SMALL)!r}, '-o', {str(tmp_path / 'out')!r}])\n"
            "assert result.exit_code == 0, result.output\n"
            "print(sorted(m for m in sys.modules if m.startswith(('netgen.nos', 'netgen.deploy', 'netmiko',"
            " 'nornir'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert eval(done.stdout) == ["netgen.nos", "netgen.nos.eos", "netgen.nos.eos.renderer", "netgen.nos.eos.structure",
                                 "netgen.nos.eos.view", "netgen.nos.sonic", "netgen.nos.sonic.config_db",
                                 "netgen.nos.sonic.renderer", "netgen.nos.sonic.schema", "netgen.nos.sonic.services",
                                 "netgen.nos.sonic.view"]


# --- what is refused ------------------------------------------------------------------------------


def test_a_second_bundle_under_a_taken_name_is_refused_the_same_one_is_nothing():
    fresh = NosRegister(group="netgen.nos.none")
    fresh.register(netgen.nos.sonic.BUNDLE)
    fresh.register(netgen.nos.sonic.BUNDLE)  # the same bundle again: nothing
    other = dataclasses.replace(netgen.nos.sonic.BUNDLE, renderer="netgen.nos.eos.renderer:RENDERER")
    with pytest.raises(NosRegistryError, match="'sonic' is registered already, by another bundle"):
        fresh.register(other)
    assert fresh.bundle("sonic") is netgen.nos.sonic.BUNDLE
    fresh.deregister("sonic")
    assert fresh.names() == []
    with pytest.raises(NosRegistryError, match="'sonic' is not registered"):
        fresh.deregister("sonic")


@pytest.mark.parametrize(("entry", "expect"), [
    (_entry("junos", "netgen.nos.sonic:BUNDLE"),
     "entry point 'junos' (netgen.nos.sonic:BUNDLE) gives the bundle of NOS 'sonic': the two names must be the same"),
    (_entry("junos", "netgen.registry:NOS"), "NOS 'junos': entry point 'netgen.registry:NOS' is a NosRegister, not a"
                                            " NosBundle"),
    (_entry("junos", "netgen_junos_not_installed:BUNDLE"),
     "NOS 'junos': entry point 'netgen_junos_not_installed:BUNDLE' (group netgen.nos) cannot be loaded:"
     " ModuleNotFoundError"),
])
def test_an_entry_point_that_gives_no_bundle_of_its_name_is_refused(monkeypatch, entry, expect):
    _with_entry_points(monkeypatch, _entry("sonic", "netgen.nos.sonic:BUNDLE"), entry)
    with pytest.raises(NosRegistryError) as caught:
        NosRegister().names()
    assert expect in str(caught.value)


@pytest.mark.parametrize(("fields", "expect"), [
    ({"name": "Junos OS"}, "NOS bundle name 'Junos OS': use 1-32 lowercase letters"),
    ({"renderer": "netgen.nos.sonic.renderer.RENDERER"}, "part renderer 'netgen.nos.sonic.renderer.RENDERER' is not an"
                                                         " import path"),
    ({"ownership": None}, "a deploy driver comes with its default ownership"),
])
def test_a_bundle_that_is_not_well_formed_is_refused_when_made(fields, expect):
    with pytest.raises(NosRegistryError, match=expect):
        dataclasses.replace(netgen.nos.sonic.BUNDLE, **fields)


@pytest.mark.parametrize(("path", "expect"), [
    ("tests.support.no_such_module:RENDERER", "NOS 'broken': part renderer (tests.support.no_such_module:RENDERER)"
                                              " cannot be imported: ModuleNotFoundError"),
    ("netgen.nos.sonic.renderer:NO_SUCH", "NOS 'broken': part renderer (netgen.nos.sonic.renderer:NO_SUCH): module"
                                          " netgen.nos.sonic.renderer has no 'NO_SUCH'"),
])
def test_a_part_that_cannot_be_imported_names_the_nos_the_part_and_the_path(path, expect):
    fresh = NosRegister(group="netgen.nos.none")
    fresh.register(NosBundle(name="broken", templates="broken", renderer=path))
    with pytest.raises(NosRegistryError) as caught:
        fresh.part("broken", "renderer")
    assert expect in str(caught.value)


def test_a_part_a_bundle_does_not_name_or_no_part_at_all_is_refused():
    with pytest.raises(NosRegistryError, match="NOS 'eos' has no lab_shim"):
        NOS.part("eos", "lab_shim")
    with pytest.raises(NosRegistryError, match="no such part 'view'"):
        NOS.part("eos", "view")  # type: ignore[arg-type]
    assert set(PARTS) <= {f.name for f in dataclasses.fields(NosBundle)}


def test_a_part_that_is_not_what_its_stage_takes_is_refused_by_that_stage():
    from netgen.deploy.driver import default_ownership  # noqa: PLC0415
    from netgen.platforms.base import renderer  # noqa: PLC0415

    NOS.register(NosBundle(name="mixed", templates="eos", renderer="netgen.nos.sonic.renderer:RENDERER",
                           driver="netgen.nos.eos.driver:eos_driver", ownership="netgen.nos.eos.driver:eos_driver"))
    try:
        with pytest.raises(NosRegistryError, match=r"NOS 'mixed': part renderer \(netgen.nos.sonic.renderer:RENDERER\)"
                                                   r" is a SonicRenderer, not a renderer plugin whose nos is 'mixed'"):
            renderer("mixed")
        with pytest.raises(NosRegistryError, match=r"part ownership .* is a function, not an Ownership"):
            default_ownership("mixed")
    finally:
        NOS.deregister("mixed")


def test_an_unknown_nos_lists_the_registered_ones_and_a_missing_shipped_one_asks_for_a_reinstall():
    empty = NosRegister(group="netgen.nos.none")
    with pytest.raises(NosRegistryError, match=r"no NOS is registered .* reinstall netgen .*pip install -e \."):
        empty.bundle("sonic")
    empty.register(netgen.nos.sonic.BUNDLE)
    with pytest.raises(NosRegistryError, match=r"NOS 'eos' ships with netgen \(netgen.nos.eos\) but is not registered:"
                                               r" this install of netgen is stale; reinstall"):
        empty.bundle("eos")
    with pytest.raises(NosRegistryError, match=r"unknown NOS 'junos'; the registered ones are sonic$"):
        empty.bundle("junos")


def test_a_catalog_model_of_an_unknown_nos_is_an_input_error(write_fabric, small_data):
    small_data["catalog"] = "catalog.yaml"
    small_data["zones"][0]["rtsw_model"] = "lab-rtsw"
    fabric = write_fabric(small_data, catalog={"models": {"lab-rtsw": {"extends": "arista-7060x6-64pe-sonic",
                                                                       "nos": "junos"}}})
    result = run_cli("validate", str(fabric), "--json")
    assert result.exit_code == 2
    problems = json.loads(result.stdout)["input_errors"]
    assert any("unknown NOS 'junos'; the registered ones are eos, sonic" in json.dumps(p) for p in problems)


def test_a_stale_install_without_the_entry_points_is_exit_2_asking_for_a_reinstall():
    code = ("import importlib.metadata as m\nreal = m.entry_points\n"
            "m.entry_points = lambda **kw: [] if kw.get('group') == 'netgen.nos' else real(**kw)\n"
            "from netgen.cli import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", code, "validate", str(SMALL), "--json"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert "no NOS is registered (entry point group netgen.nos is empty)" in done.stdout
    assert "reinstall netgen" in done.stdout and "Traceback" not in done.stdout + done.stderr


# --- a NOS netgen does not ship -------------------------------------------------------------------


def _installed(site: Path) -> dict[str, str]:
    """An environment in which fake_nos is installed as a package declares it: a dist-info folder
    with its entry point, on PYTHONPATH (with the checkout, where `tests` is)."""
    info = site / "netgen_fakenos-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: netgen-fakenos\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{fake_nos.NAME} = tests.support.fake_nos:BUNDLE\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}


def test_a_third_nos_is_rendered_through_its_entry_point_without_editing_netgen(tmp_path, write_fabric, small_data):
    small_data["catalog"] = "catalog.yaml"
    small_data["zones"][1]["rtsw_model"] = "lab-fake-rtsw"  # zone 2's rack switches run the fake NOS
    fabric = write_fabric(small_data, catalog={"models": {"lab-fake-rtsw": {
        "extends": "arista-7060x6-64pe-eos", "nos": fake_nos.NAME,
        "description": "the hardware of an EOS model, running the fake NOS of the tests"}}})
    out = tmp_path / "out"
    env = _installed(tmp_path / "site")
    done = subprocess.run([sys.executable, "-m", "netgen.cli", "render", str(fabric), "-o", str(out), "--json"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"] == {} and report["devices"] == 18, report
    faked = sorted(p.parent.name for p in out.glob("*/*.txt"))
    assert faked == sorted(p.name for p in out.glob("z02-rtsw*")) and faked  # zone 2's RTSWs, and only they
    text = (out / faked[0] / f"{faked[0]}.txt").read_text()
    assert text.startswith(f"hostname {faked[0]}\nasn ") and "\nport " in text
    # the same fabric without the entry point: the fake NOS is unknown, an input error
    plain = subprocess.run([sys.executable, "-m", "netgen.cli", "validate", str(fabric)], capture_output=True,
                           text=True, cwd=tmp_path, check=False)
    assert plain.returncode == 2 and f"unknown NOS {fake_nos.NAME!r}" in plain.stderr


def test_a_part_that_fails_to_import_during_a_command_is_exit_2_naming_it(write_fabric, small_data):
    NOS.register(NosBundle(name="broken", templates="broken", renderer="netgen_broken_not_installed:RENDERER"))
    try:
        small_data["catalog"] = "catalog.yaml"
        small_data["zones"][1]["rtsw_model"] = "lab-broken-rtsw"
        fabric = write_fabric(small_data, catalog={"models": {"lab-broken-rtsw": {
            "extends": "arista-7060x6-64pe-eos", "nos": "broken"}}})
        for args in ((), ("--json",)):
            result = run_cli("render", str(fabric), "--check", *args)
            assert result.exit_code == 2, result.output
            text = json.loads(result.stdout)["error"] if args else result.output
            assert ("NOS 'broken': part renderer (netgen_broken_not_installed:RENDERER) cannot be imported:"
                    " ModuleNotFoundError") in text
            assert "internal error" not in result.output
    finally:
        NOS.deregister("broken")
