"""What the package may import: nothing from the tests (their doubles stay out of the wheel, see
test_wheel.py), and the production push (netgen/deploy) nothing from the lab, whose code serves a
lab and the tests. Read from the source with ast: every import statement, at the top or inside a
function, relative ones resolved."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.render


def imported(source: str, module: str, *, package: bool = False) -> list[tuple[int, str]]:
    """(line, dotted name) of every import in the source of `module` (a package's __init__ when
    `package`); `from a import b` gives a.b."""
    parts = module.split(".") if package else module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def importing(folder: Path, *names: str) -> list[str]:
    """"path:line: name" for each import, in the .py files under folder, of one of `names` or below."""
    hits = []
    for path in sorted(folder.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        package = path.name == "__init__.py"
        for line, name in imported(path.read_text(encoding="utf-8"), module.removesuffix(".__init__"),
                                   package=package):
            if any(name == n or name.startswith(n + ".") for n in names):
                hits.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    return hits


def test_nothing_in_netgen_imports_the_tests():
    assert importing(ROOT / "netgen", "tests") == []


def test_the_production_push_imports_nothing_from_the_lab():
    assert importing(ROOT / "netgen" / "deploy", "netgen.lab") == []


def test_the_scan_finds_each_kind_of_import():
    source = ("import tests.support.eos_emulator\n"
              "from netgen.lab import endpoints\n"
              "def later():\n"
              "    from ..lab.plan import LabSliceError\n"
              "    from . import target\n")
    assert [name for _, name in imported(source, "netgen.deploy.pipeline")] == [
        "tests.support.eos_emulator", "netgen.lab.endpoints", "netgen.lab.plan.LabSliceError",
        "netgen.deploy.target"]
    assert [name for _, name in imported("from .driver import Driver\n", "netgen.deploy", package=True)] == [
        "netgen.deploy.driver.Driver"]


NOS_DIR = ROOT / "netgen" / "nos"
BUNDLES = sorted(p.parent.name for p in NOS_DIR.glob("*/__init__.py"))


def test_nothing_outside_the_nos_bundles_imports_one():
    """The stages reach a NOS through the register (netgen/registry.py), never by importing it."""
    hits = [hit for hit in importing(ROOT / "netgen", "netgen.nos") if not hit.startswith("netgen/nos/")]
    assert hits == []


def test_no_nos_bundle_imports_another():
    assert BUNDLES == ["eos", "sonic"]
    for nos in BUNDLES:
        others = [f"netgen.nos.{other}" for other in BUNDLES if other != nos]
        assert importing(NOS_DIR / nos, *others) == [], nos


def test_a_bundle_module_imports_only_the_register():
    """Registering a NOS (its entry point loads the package) imports no NOS code."""
    for nos in BUNDLES:
        source = (NOS_DIR / nos / "__init__.py").read_text(encoding="utf-8")
        names = {name for _, name in imported(source, f"netgen.nos.{nos}", package=True)}
        assert names <= {"__future__.annotations", "netgen.registry.NosBundle"}, nos


def test_a_nos_driver_imports_nothing_from_the_lab():
    """A NOS's deploy driver is production push code, as netgen/deploy is."""
    assert [hit for hit in importing(NOS_DIR, "netgen.lab") if "/driver.py:" in hit] == []
