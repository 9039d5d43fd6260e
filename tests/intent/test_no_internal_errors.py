"""Numbers are bounded where they are typed, so no input reaches exit 3 (issue 13).

Fabric files are the example's parsed inventory/small/fabric.yaml with numbers, sizes and ratios
replaced by hostile ones (300-digit numbers, inf/nan, '1e400MB', '0:1', '1e309:1', negative and
tiny values), keys deleted, entries duplicated and optional numeric keys added; `netgen validate`
runs in-process on each and must answer 0, 1 or 2, with no exception escaping and no huge number
printed in full. The parsers of typed values are checked directly as well (fast, many examples).

Runs derandomized (the same examples on every run, so CI is reproducible); about 30 s on 2 cores.
NETGEN_FUZZ_SCALE=10 runs ten times more examples.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import PydanticCustomError

from netgen.intent import loader
from netgen.intent.loader import builtin_catalog_raw
from netgen.intent.types import MAX_BYTES, MAX_RATIO_SIDE, parse_bytes, parse_ratio, parse_speed
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

SCALE = float(os.environ.get("NETGEN_FUZZ_SCALE", "1"))
SMALL_DATA: dict[str, Any] = yaml.safe_load(SMALL.read_text())


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


RUN = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

# --- hostile numbers -------------------------------------------------------------------------------
HUGE_DIGITS = st.integers(20, 400).map(lambda n: "9" * n)
NUMBER_TEXT = st.one_of(
    st.integers(-(10**7), 10**7).map(str),
    HUGE_DIGITS,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from([
        "0", "-0", "00", "0.0", "1.5", "0.000001", "0.0000001", "1e309", "1e-400", "1e400", "-1e309",
        "inf", "-inf", "nan", ".inf", "-.inf", ".nan", "Infinity", "NaN", "0x10", "1_000", "1,000", "", " ",
        "0." + "0" * 400 + "1", "1." + "0" * 400, "9" * 309, "9" * 4000, "1099511627776", "1099511627777",
        "1000000", "1000000.000001", "1024.000000001",
    ]),
)
UNITS = st.sampled_from(["B", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "G", "", " MB", "kb", "g"])
SIZES = st.builds(lambda number, unit: number + unit, NUMBER_TEXT, UNITS)
RATIOS = st.one_of(
    st.builds(lambda up, down: f"{up}:{down}", NUMBER_TEXT, NUMBER_TEXT),
    st.sampled_from(["0:1", "1:0", "0:0", "1e309:1", "1:1e309", ":1", "1:", "1:2:3", "-1:7", "1 : 7", "inf:1"]),
)
NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(10**299, 10**301),
    st.integers(-(10**301), -(10**299)),
    st.sampled_from([0, -1, 1, 2, 63, 64, 255, 256, 4096, 65535, 2**31, 2**32 - 1, 2**32, 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, 5e-324, -0.0, 0.5, 1.0, 3.7]),
)
NUMBERISH = st.one_of(NUMBERS, SIZES, RATIOS, NUMBER_TEXT)
ANYTHING = st.recursive(
    st.one_of(st.none(), st.booleans(), st.text(max_size=12), NUMBERISH),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)

# Optional keys that are typed numbers, sizes or ratios, and so not in the example file: "add" puts
# them in with a hostile value wherever they would be valid (and elsewhere, as unknown keys).
OPTIONAL_NUMERIC_KEYS = [
    "rtsw_zone_stride", "overrides", "ports_per_zone", "oversubscription_tolerance", "rtsw_oversubscription",
    "host_prefix_length", "gpus_per_host", "fabric_link_speed", "link_speed", "cable_length_m", "dynamic_th",
    "per_port", "roce_mtu", "udp_dst_port", "default_traffic_class", "max_zones", "max_mark_probability",
    "min_threshold", "max_threshold", "expected_oversubscription", "atsw", "ctsw_base", "rtsw_base", "mtu",
]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        data = data[part]
    return data


@st.composite
def hostile(draw: st.DrawFn, document: dict[str, Any], max_ops: int = 3) -> Any:
    """`document` with 1..max_ops edits, mostly a scalar replaced by a hostile number."""
    data = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_ops))):
        nodes = list(_paths(data))
        op = draw(st.sampled_from(["number", "number", "number", "replace", "delete", "duplicate", "add"]))
        if op == "number":
            leaves = [path for path, node in nodes if path and not isinstance(node, dict | list)]
            if leaves:
                path = draw(st.sampled_from(leaves))
                _parent(data, path)[path[-1]] = draw(NUMBERISH)
        elif op in ("replace", "delete"):
            path = draw(st.sampled_from([path for path, _ in nodes if path]))
            if op == "replace":
                _parent(data, path)[path[-1]] = draw(ANYTHING)
            else:
                del _parent(data, path)[path[-1]]
        elif op == "duplicate":
            lists = [node for _, node in nodes if isinstance(node, list) and node]
            if lists:
                target = draw(st.sampled_from(lists))
                target.append(copy.deepcopy(draw(st.sampled_from(target))))
        else:
            mappings = [node for _, node in nodes if isinstance(node, dict)]
            target = draw(st.sampled_from(mappings))
            target[draw(st.sampled_from(OPTIONAL_NUMERIC_KEYS))] = draw(NUMBERISH)
    return data


# --- running netgen validate in-process --------------------------------------------------------------
@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A directory for the cases, with the built-in catalog read once: it is the same for every
    case, and reading it is most of the time a small fabric takes. A user catalog is still read and
    validated, with the built-in one, on every case that names one."""
    real = loader.load_catalog
    builtin = real()
    raw = builtin_catalog_raw()

    def load_catalog(extra: Path | None = None, extra_display: str | None = None) -> Any:
        return builtin if extra is None else real(extra, extra_display)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "load_catalog", load_catalog)
        patch.setattr(loader, "builtin_catalog_raw", lambda: copy.deepcopy(raw))
        yield tmp_path_factory.mktemp("no-internal-errors")


_counter = itertools.count()
HUGE_NUMBER = re.compile(r"[0-9]{100}")


def validate(base: Path, data: Any, catalog: Any = None, as_json: bool = False) -> Result:
    folder = base / f"case{next(_counter)}"
    folder.mkdir()
    (folder / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (folder / "secrets").symlink_to(SMALL.parent / "secrets")  # the hash validate reads, as render does
    if catalog is not None:
        (folder / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False), encoding="utf-8")
    result = run_cli("validate", *(["--json"] if as_json else []), str(folder / "fabric.yaml"))
    output = result.stdout + result.stderr
    assert result.exit_code in (0, 1, 2), f"exit {result.exit_code} (3 = internal error):\n{output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output and "internal error" not in output
    assert not HUGE_NUMBER.search(output), f"a huge number printed in full:\n{output[:2000]}"
    if as_json:
        payload = json.loads(result.stdout)
        assert payload["exit_code"] == result.exit_code
        for problem in payload.get("input_errors", []):
            assert problem["file"].endswith(".yaml") and problem["message"], problem
    elif result.exit_code == 2:
        assert str(folder) in result.stderr, "an input error names its file"
    return result


@settings(RUN, max_examples=examples(1200))
@given(data=hostile(SMALL_DATA), as_json=st.booleans())
def test_hostile_numbers_in_the_fabric_never_reach_exit_3(workdir, data, as_json):
    validate(workdir, data, as_json=as_json)


def _with_user_catalog() -> tuple[dict[str, Any], dict[str, Any]]:
    """The small fabric on a user catalog that carries its own model and ASIC family (copies of
    built-in ones), so catalog numbers reach headroom, buffer and port arithmetic."""
    raw, _ = builtin_catalog_raw()
    family = copy.deepcopy(raw["asic_families"]["tomahawk5"])
    model = copy.deepcopy(raw["models"]["arista-7060x6-64pe-sonic"])
    model["asic_family"] = "tomahawk3"
    del model["lanes"]  # 64 lists of 8 lane numbers: sequential lanes keep the mutations on the rest
    fabric = copy.deepcopy(SMALL_DATA)
    fabric["catalog"] = "catalog.yaml"
    fabric["zones"][0]["rtsw_model"] = "lab-rtsw"
    return fabric, {"models": {"lab-rtsw": model}, "asic_families": {"tomahawk3": family}}


CATALOG_FABRIC, USER_CATALOG = _with_user_catalog()


def test_the_user_catalog_base_case_is_valid(workdir):
    """The catalog case starts from a file that loads (so its mutations test the numbers)."""
    assert validate(workdir, CATALOG_FABRIC, USER_CATALOG).exit_code in (0, 1)


@settings(RUN, max_examples=examples(150))
@given(catalog=hostile(USER_CATALOG))
def test_hostile_numbers_in_a_user_catalog_never_reach_exit_3(workdir, catalog):
    validate(workdir, CATALOG_FABRIC, catalog)


# --- the typed-value parsers themselves ---------------------------------------------------------------
PARSER_INPUT = st.one_of(SIZES, RATIOS, NUMBER_TEXT, NUMBERS, st.text(max_size=30), st.booleans(), st.none())
REFUSED = (ValueError, PydanticCustomError)


@settings(RUN, max_examples=examples(3000))
@given(value=PARSER_INPUT)
def test_sizes_are_bounded_where_they_are_typed(value):
    try:
        size = parse_bytes(value)
    except REFUSED:
        return
    assert isinstance(size, int) and 0 <= size <= MAX_BYTES


@settings(RUN, max_examples=examples(3000))
@given(value=PARSER_INPUT)
def test_ratios_are_bounded_where_they_are_typed(value):
    try:
        ratio = parse_ratio(value)
    except REFUSED:
        return
    for side in (ratio.up, ratio.down):
        assert math.isfinite(side) and 0 < side <= MAX_RATIO_SIDE
    assert math.isfinite(ratio.factor) and ratio.factor > 0


@settings(RUN, max_examples=examples(1000))
@given(value=st.one_of(PARSER_INPUT, st.builds(lambda n: f"{n}G", NUMBER_TEXT)))
def test_speeds_are_bounded_where_they_are_typed(value):
    try:
        speed = parse_speed(value)
    except REFUSED:
        return
    assert speed in (10, 25, 40, 50, 100, 200, 400, 800, 1600)


@pytest.mark.parametrize(("text", "size"), [
    ("0B", 0), ("9216B", 9216), ("150KB", 150_000), ("1.5MiB", 1_572_864), ("1.5MB", 1_500_000),
    ("1.001KB", 1001), ("1024GiB", MAX_BYTES), ("1099511627776B", MAX_BYTES), (" 2 KiB ", 2048),
])
def test_size_edges_that_are_allowed(text, size):
    assert parse_bytes(text) == size


@pytest.mark.parametrize("text", [
    "1099511627777B", "1024.000000001GiB", "1025GiB", "9" * 400 + "KB", "1e400MB", "inf MB", "nan B",
    "1.0000000001KB", "-1KB", "1TiB", "150", "", "1.5 MiBs",
])
def test_size_edges_that_are_refused(text):
    with pytest.raises(REFUSED):
        parse_bytes(text)


@pytest.mark.parametrize("text", ["0:1", "1:0", "1e309:1", "1:" + "9" * 400, "1000000.000001:1", "0.0000001:1",
                                  "1:0.0000001", "1:1000001", "-1:7", "inf:1", "nan:1", "1:2:3"])
def test_ratio_edges_that_are_refused(text):
    with pytest.raises(REFUSED):
        parse_ratio(text)


@pytest.mark.parametrize(("text", "factor"), [("1:7", 7.0), ("1:1", 1.0), ("0.000001:1000000", 1e12),
                                              ("1000000:0.000001", 1e-12), (" 2 : 3 ", 1.5)])
def test_ratio_edges_that_are_allowed(text, factor):
    assert parse_ratio(text).factor == pytest.approx(factor)


def test_a_huge_size_in_a_fabric_is_an_input_error_naming_everything(workdir):
    data = copy.deepcopy(SMALL_DATA)
    data["qos"]["ecn"]["max_threshold"] = "9" * 400 + "KB"
    result = validate(workdir, data, as_json=True)
    [problem] = json.loads(result.stdout)["input_errors"]
    assert result.exit_code == 2
    assert problem["path"] == "qos.ecn.max_threshold" and problem["line"] and problem["column"]
    assert problem["given"].startswith("'999") and len(problem["given"]) <= 60
    assert problem["allowed"] == "<= 1024GiB" and "too large" in problem["message"]


def test_a_huge_ratio_in_a_fabric_is_an_input_error_naming_everything(workdir):
    data = copy.deepcopy(SMALL_DATA)
    data["aggregation"]["expected_oversubscription"] = "1:" + "9" * 400
    result = validate(workdir, data, as_json=True)
    [problem] = json.loads(result.stdout)["input_errors"]
    assert result.exit_code == 2
    assert problem["path"] == "aggregation.expected_oversubscription" and problem["line"]
    assert problem["allowed"] == "<= 1,000,000" and len(problem["given"]) <= 60
