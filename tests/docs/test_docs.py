"""The docs hold their promises: a short README whose first commands are the quick start and the
test command, a site whose every page is in its navigation, reference parts generated from the
code (docs/hooks/netgen_reference.py, run here without mkdocs), design-check examples that are
the tested cases, and no comment in netgen/ citing a note users do not have."""

from __future__ import annotations

import copy
import importlib.util
import re
from types import ModuleType

import pytest
import yaml

from tests.conftest import ROOT, SMALL

pytestmark = pytest.mark.render

DOCS = ROOT / "docs"
README = ROOT / "README.md"
QUICK_START = ("python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/netgen show inventory/small"
               " && .venv/bin/netgen render inventory/small -o out/small")
TEST_COMMAND = ".venv/bin/python -m pytest"
README_MAX_LINES = 200


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("netgen_reference", DOCS / "hooks" / "netgen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = _hook()


def _code_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"^```\w*\n(.*?)^```", text, re.MULTILINE | re.DOTALL)]


# --- the README ------------------------------------------------------------------------------------
def test_the_readme_is_short_and_starts_with_the_quick_start_then_the_test_command():
    text = README.read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    blocks = _code_blocks(text)
    assert blocks[0] == QUICK_START  # CI and new users run it as it stands
    assert blocks[1] == TEST_COMMAND  # .ci/run runs "the README's test command"
    assert "apt-get install frr" in text  # the one-line note on the lab tier's packages


def test_every_link_of_the_readme_into_the_docs_resolves():
    links = re.findall(r"\]\((docs/[^)#]+)", README.read_text())
    assert links
    assert [link for link in links if not (ROOT / link).is_file()] == []


# --- the site --------------------------------------------------------------------------------------
def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
    assert sorted(nav) == pages
    assert config["hooks"] == ["docs/hooks/netgen_reference.py"]
    assert config["theme"]["font"] is False  # no Google Fonts fetch: the build and the site work offline


def test_every_marker_names_a_generator_and_every_generator_is_used():
    markers = {m for page in DOCS.rglob("*.md") for m in HOOK.MARKER.findall(page.read_text())}
    assert markers == set(HOOK.GENERATORS)


# --- the generated parts ---------------------------------------------------------------------------
def test_the_command_reference_lists_every_command_and_subcommand_with_its_options():
    from netgen.cli import COMMANDS  # noqa: PLC0415

    text = HOOK.commands()
    headings = set(re.findall(r"^## (netgen[\w -]*?) \{#", text, re.MULTILINE))
    assert {f"netgen {name}" for name in COMMANDS} <= headings  # lazily loaded ones included
    assert {"netgen lab up", "netgen sot push", "netgen whatif ecmp"} <= headings
    assert "`-o, --output DIR`" in text and "`--json`" in text


def test_the_exit_codes_are_the_ones_the_code_exits_with():
    from netgen.cli import common  # noqa: PLC0415

    assert [code for code, _ in HOOK.exit_code_rows()] == [
        common.EXIT_OK, common.EXIT_DESIGN, common.EXIT_INPUT, common.EXIT_INTERNAL]
    assert "netgen render" in HOOK.exit_codes()


def test_the_fabric_reference_has_every_field_of_the_schema():
    text = HOOK.fabric_schema()
    for field in ("zones", "links_per_rtsw_ctsw", "qps_per_connection", "custom_config"):
        assert f"**`{field}`**" in text, field
    assert "## Zone {#zone}" in text


def test_the_layout_names_every_package():
    text = HOOK.layout()
    packages = [p.name for p in (ROOT / "netgen").iterdir() if (p / "__init__.py").is_file()]
    assert [name for name in packages if f"`netgen/{name}/`" not in text] == []


def test_the_api_reference_has_every_public_name_with_its_docstring():
    from netgen import api  # noqa: PLC0415

    text = HOOK.api_reference()
    for name in api.__all__:
        assert f"### `{name}` {{#" in text, name
    assert "def render(fabric: str | Path | LoadedFabric, output: Path | None, *, devices:" in text
    assert "* `netgen.topology.selection.SelectionError`: A name or pattern of `devices` matches no device." in text
    assert " at 0x" not in text  # defaults by name, never an address


# --- design checks: the docs' examples are the tested cases -----------------------------------------
def test_every_check_has_a_tested_failing_and_passing_example_and_the_snippet_is_all_it_changes():
    from netgen.checks import REGISTRY  # noqa: PLC0415
    from tests.checks.test_design_checks import CASES  # noqa: PLC0415

    small = yaml.safe_load(SMALL.read_text())
    examples = HOOK.design_check_examples()
    assert set(examples) == set(REGISTRY)
    for code, picked in examples.items():
        assert set(picked) == {"failing", "passing"}, code
        for role, example in picked.items():
            case = example["case"]
            assert case in CASES and case.code == code and case.bug is None, (code, role)
            assert (case.severity is None) == (role == "passing"), (code, case.id)
            mutated = copy.deepcopy(small)
            case.mutate(mutated)
            assert example["data"] == mutated, (code, case.id)
            assert HOOK.apply_snippet_tree(small, mutated) == mutated, (code, case.id)


def test_a_snippet_shows_the_new_values_and_the_old_ones():
    before = {"zones": [{"id": 1, "racks": 4}, {"id": 2, "racks": 4}], "aggregation": {"atsw_count": 2}}
    after = {"zones": [{"id": 1, "racks": 5}, {"id": 2, "racks": 4}]}
    assert HOOK.snippet(before, after).splitlines() == [
        "zones:", "  - id: 1", "    racks: 5  # was 4", "# aggregation: removed (was {atsw_count: 2})"]
    assert HOOK.apply_snippet_tree(before, after) == after


# --- no comment in netgen/ cites what users do not have ----------------------------------------------
STALE = re.compile(r"\b(?:eos|sonic|lab|cluster|meta-fabric|infiniband|anchors)\.md\b|shared/reference|nothing here yet"
                   r"|README \"")


def test_netgen_cites_no_note_outside_the_repository_and_no_readme_section():
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "netgen").rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1) if STALE.search(line)]
    assert found == []
