"""Bad fabric and catalog files: every input error exits 2 with a message that locates the problem.

The contract under test (netgen/cli.py, netgen/intent/errors.py, netgen/intent/loader.py):

* exit code 2 for unreadable or invalid fabric/catalog files, never a traceback;
* every problem names the file, the line (and column where the loader has one), the dotted path of
  the field, what was given and what is allowed;
* every string that can reach a device config (names, free text) is restricted to a safe character
  set, so newlines, comment characters, quotes and control characters are rejected at load time.

Expected lines and columns are computed from the YAML document itself (PyYAML's composer), not copied
from netgen's output. A location may point at a field's key or at its value; both are accepted.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from netgen.intent.catalog import Catalog
from netgen.intent.fabric import Fabric
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

EXIT_INPUT = 2
BUILTIN_RTSW = "arista-7060x6-64pe-sonic"
BUILTIN_NAMES = (
    "arista-7060x6-64pe-sonic",
    "arista-7060x6-64pe-eos",
    "arista-7060dx5-64s-sonic",
    "arista-7804r3a-36p-eos",
    "arista-7808r3a-36p-eos",
)


# --- helpers --------------------------------------------------------------------------------------
def assert_input_error(result: Result) -> str:
    """Exit 2, no leaked exception, no traceback anywhere; returns stderr."""
    assert result.exit_code == EXIT_INPUT, (
        f"expected exit 2, got {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stdout
    assert "Traceback" not in result.stderr
    assert result.stderr.strip(), "an input error must be explained on stderr"
    return result.stderr


def validate(path: Path | str, *extra: str) -> Result:
    return run_cli("validate", str(path), *extra)


def node_marks(text: str, path: tuple[str | int, ...]) -> list[tuple[int, int]]:
    """1-based (line, column) of the key (if any) and of the value at `path` in a YAML document."""
    node = yaml.compose(text)
    key: yaml.Node | None = None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    key, node = k, v
                    break
            else:
                raise KeyError(f"{part!r} not found in the document")
        elif isinstance(node, yaml.SequenceNode):
            key, node = None, node.value[int(part)]
        else:
            raise KeyError(f"{part!r}: not a container")
    marks = [(node.start_mark.line + 1, node.start_mark.column + 1)]
    if key is not None:
        marks.insert(0, (key.start_mark.line + 1, key.start_mark.column + 1))
    return marks


def find_problem(stderr: str, file: Path | str, marks: list[tuple[int, int]] | None, dotted: str) -> str:
    """The stderr line reporting `dotted` at one of `marks` (or with no line when marks is None)."""
    heads = (
        [f"{file}: {dotted}: " if dotted else f"{file}: "]
        if marks is None
        else [f"{file}:{line}:{col}: {dotted}: " if dotted else f"{file}:{line}:{col}: " for line, col in marks]
    )
    for line in stderr.splitlines():
        if any(head in line for head in heads):
            return line
    raise AssertionError(f"no problem located at any of {heads!r} in stderr:\n{stderr}")


def given_part(line: str) -> str:
    assert "given: " in line, f"the message does not say what was given: {line}"
    return line.split("given: ", 1)[1]


def allowed_part(line: str) -> str:
    assert "allowed: " in line, f"the message does not say what is allowed: {line}"
    return line.split("allowed: ", 1)[1]


def set_at(data: Any, path: tuple[str | int, ...], value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def dotted(path: tuple[str | int, ...]) -> str:
    """('zones', 0, 'racks') -> 'zones[0].racks', the form errors.py documents for InputProblem.path."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=False)


# --- the baseline is valid --------------------------------------------------------------------------
def test_unmodified_small_fabric_is_not_an_input_error(small_data, write_fabric):
    path = write_fabric(small_data)
    for target in (path, path.parent):  # the file itself and its directory
        result = validate(target)
        assert result.exit_code in (0, 1), result.output
        assert "Traceback" not in result.output


# --- YAML syntax --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        # a key indented under a scalar: the ':' on line 2 is where the parser gives up
        ("name: lab\n  mtu: 9100\n", 2, 6),
        # a tab cannot start a token
        ("name: lab\n\tmtu: 9100\n", 2, 1),
        # an unclosed flow sequence followed by another key
        ("name: lab\nzones: [1, 2\nmtu: 9100\n", 3, 4),
    ],
    ids=["mapping-under-scalar", "tab-indent", "unclosed-flow-sequence"],
)
def test_yaml_syntax_error_names_line_and_column(write_fabric, text, line, column):
    path = write_fabric(text=text)
    stderr = assert_input_error(validate(path))
    problem = find_problem(stderr, path, [(line, column)], "")
    assert "YAML" in problem


def test_yaml_syntax_error_inside_real_fabric(small_data, write_fabric):
    text = dump(small_data)
    lines = text.splitlines(keepends=True)
    index = next(i for i, ln in enumerate(lines) if ln.startswith("  ctsw_count:"))
    lines[index] = "  ctsw_count: [4\n"  # never closed: the next line is a block key
    path = write_fabric(text="".join(lines))
    stderr = assert_input_error(validate(path))
    assert f"{path}:{index + 2}:" in stderr, stderr  # the parser stops on the following line


@pytest.mark.parametrize(
    "text",
    ["name: !!python/object:os.system x\n", "name: !!python/name:os.system\n", "name: !custom x\n"],
    ids=["python-object", "python-name", "local-tag"],
)
def test_unsafe_or_unknown_yaml_tag_is_rejected(write_fabric, text):
    path = write_fabric(text=text)
    stderr = assert_input_error(validate(path))
    problem = find_problem(stderr, path, [(1, 7)], "")
    assert "tag" in problem


@pytest.mark.parametrize(
    "text",
    ["name: !!int x\n", "name: !!int\n", "!!int\n", "name: !!int 0x\n", "name: !!float x\n",
     "name: !!bool maybe\n", "name: !!timestamp x\n", "name: !!timestamp 2020-13-45\n"],
    ids=["int-word", "int-empty", "int-document", "int-0x", "float-word", "bool-word", "timestamp-word",
         "timestamp-month-13"],
)
def test_explicit_tag_with_invalid_value(write_fabric, text):
    path = write_fabric(text=text)
    stderr = assert_input_error(validate(path))
    assert f"{path}:1:" in stderr, stderr


def test_several_documents_in_one_file(write_fabric):
    path = write_fabric(text="name: a\n---\nname: b\n")
    stderr = assert_input_error(validate(path))
    assert f"{path}:2:" in stderr or f"{path}:3:" in stderr, stderr


# --- schema errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "value", "given", "allowed"),
    [
        (("zones", 0, "racks"), "four", "'four'", "integer"),
        (("mtu",), "jumbo", "'jumbo'", "integer"),
        (("zones", 0, "cable_length_m"), [1, 2], "list", "mapping"),
        (("qos", "classes"), {"name": "x"}, "mapping", "list"),
        (("bgp", "bfd", "enabled"), "sometimes", "'sometimes'", "true or false"),
        (("name",), 42, "42", "string"),
    ],
    ids=["int-as-word", "mtu-word", "list-for-mapping", "mapping-for-list", "bool-word", "int-for-name"],
)
def test_wrong_type(small_data, write_fabric, path, value, given, allowed):
    set_at(small_data, path, value)
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), path), dotted(path))
    assert given in given_part(problem)
    assert allowed in allowed_part(problem)


@pytest.mark.parametrize(
    ("path", "dotted", "value", "bound"),
    [
        (("zones", 1, "ctsw_count"), "zones[1].ctsw_count", 0, "1"),
        (("zones", 0, "racks"), "zones[0].racks", 4097, "4096"),
        (("mtu",), "mtu", 10000, "9216"),
        (("qos", "lossless", "dscp", 0), "qos.lossless.dscp[0]", 64, "63"),
        (("bgp", "hold_s"), "bgp.hold_s", 2, "3"),
        (("addressing", "max_zones"), "addressing.max_zones", 256, "255"),
        (("asn", "atsw"), "asn.atsw", 4_294_967_295, "4294967294"),
    ],
    ids=["ctsw_count-0", "racks-4097", "mtu-10000", "dscp-64", "hold-2", "max_zones-256", "asn-2^32-1"],
)
def test_out_of_range(small_data, write_fabric, path, dotted, value, bound):
    set_at(small_data, path, value)
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), path), dotted)
    assert str(value) in given_part(problem)
    assert bound in allowed_part(problem)


def test_value_not_in_a_fixed_set(small_data, write_fabric):
    small_data["qos"]["pfc_watchdog"]["action"] = "reboot"
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    path = ("qos", "pfc_watchdog", "action")
    problem = find_problem(stderr, file, node_marks(file.read_text(), path), "qos.pfc_watchdog.action")
    assert "reboot" in given_part(problem)
    allowed = allowed_part(problem)
    assert all(choice in allowed for choice in ("drop", "forward", "alert"))


def test_unsupported_speed(small_data, write_fabric):
    small_data["zones"][0]["nic_speed"] = "300G"
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), ("zones", 0, "nic_speed")),
                           "zones[0].nic_speed")
    assert "300G" in given_part(problem)
    assert "400G" in problem  # the supported speeds are listed


@pytest.mark.parametrize(
    ("where", "typo", "meant"),
    [
        (("zones", 0), "ctsw_cout", "ctsw_count"),
        ((), "zone", "zones"),
        (("qos",), "losless", "lossless"),
        (("aggregation",), "atsw_modle", "atsw_model"),
        (("bgp", "bfd"), "multiplyer", "multiplier"),
    ],
    ids=["zone-field", "top-level", "qos", "aggregation", "bfd"],
)
def test_unknown_key_suggests_the_close_match(small_data, write_fabric, where, typo, meant):
    target = small_data
    for part in where:
        target = target[part]
    if meant in target:
        target[typo] = target.pop(meant)
    else:
        target[typo] = 1
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), (*where, typo)), dotted((*where, typo)))
    assert "unknown key" in problem
    assert f"'{typo}'" in problem
    assert f"did you mean '{meant}'" in allowed_part(problem)


@pytest.mark.parametrize(
    ("container", "field", "dotted"),
    [
        (("zones", 1), "racks", "zones[1].racks"),
        (("zones", 0), "ctsw_model", "zones[0].ctsw_model"),
        (("aggregation",), "atsw_count", "aggregation.atsw_count"),
        (("addressing",), "host_ipv4", "addressing.host_ipv4"),
        ((), "zones", "zones"),
    ],
    ids=["zone-racks", "zone-ctsw_model", "atsw_count", "host_ipv4", "zones"],
)
def test_missing_required_field(small_data, write_fabric, container, field, dotted):
    target = small_data
    for part in container:
        target = target[part]
    del target[field]
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    # The field is absent, so the problem points at the mapping that should hold it.
    problem = find_problem(stderr, file, node_marks(file.read_text(), container), dotted)
    assert "missing" in problem
    assert "allowed: " in problem


def test_every_problem_is_reported_not_just_the_first(small_data, write_fabric):
    small_data["zones"][0]["racks"] = "four"
    small_data["bgp"]["hold_s"] = 1
    small_data["qos"]["cts"]["queue"] = 99
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    text = file.read_text()
    find_problem(stderr, file, node_marks(text, ("zones", 0, "racks")), "zones[0].racks")
    find_problem(stderr, file, node_marks(text, ("bgp", "hold_s")), "bgp.hold_s")
    find_problem(stderr, file, node_marks(text, ("qos", "cts", "queue")), "qos.cts.queue")


# --- duplicate keys -------------------------------------------------------------------------------
def test_duplicate_top_level_key(small_data, write_fabric):
    text = dump(small_data)
    first = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("mtu:"))
    text += "mtu: 9000\n"
    last = len(text.splitlines())
    file = write_fabric(text=text)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, [(last, 1)], "")
    assert "duplicate" in problem
    assert "'mtu'" in problem
    assert f"line {first}" in problem  # says where the first definition is


def test_duplicate_nested_key(small_data, write_fabric):
    lines = dump(small_data).splitlines(keepends=True)
    first = next(i for i, ln in enumerate(lines) if ln.startswith("  racks:"))
    lines.insert(first + 1, "  racks: 5\n")
    file = write_fabric(text="".join(lines))
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, [(first + 2, 3)], "")
    assert "duplicate" in problem
    assert "'racks'" in problem
    assert f"line {first + 1}" in problem


# --- addresses --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "dotted", "value"),
    [
        (("addressing", "p2p_ipv4"), "addressing.p2p_ipv4", "10.1.0.1/16"),
        (("addressing", "loopback_ipv4"), "addressing.loopback_ipv4", "10.0.0.5/20"),
        (("addressing", "loopback_ipv6"), "addressing.loopback_ipv6", "fd00::1/64"),
        (("frontend_prefixes", 0), "frontend_prefixes[0]", "10.192.0.1/11"),
    ],
    ids=["p2p_ipv4", "loopback_ipv4", "loopback_ipv6", "frontend-union"],
)
def test_network_with_host_bits_set(small_data, write_fabric, path, dotted, value):
    set_at(small_data, path, value)
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), path), dotted)
    assert value in given_part(problem)
    assert "host bits" in allowed_part(problem)


@pytest.mark.parametrize(
    ("path", "value"),
    [(("addressing", "loopback_ipv4"), True), (("addressing", "p2p_ipv4"), 167772160),
     (("addressing", "loopback_ipv6"), 42), (("frontend_prefixes", 0), 3)],
    ids=["bool", "int-v4", "int-v6", "int-frontend"],
)
def test_network_given_as_a_number(small_data, write_fabric, path, value):
    set_at(small_data, path, value)
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), path), dotted(path))
    assert str(value) in given_part(problem)


# --- cross checks --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "dotted", "typo", "meant"),
    [
        (("zones", 0, "rtsw_model"), "zones[0].rtsw_model", "arista-7060x6-64pe-sonc", "arista-7060x6-64pe-sonic"),
        (("zones", 1, "ctsw_model"), "zones[1].ctsw_model", "arista-7804r3a-36p", "arista-7804r3a-36p-eos"),
        (("aggregation", "atsw_model"), "aggregation.atsw_model", "arista-7808r3-36p-eos", "arista-7808r3a-36p-eos"),
    ],
    ids=["rtsw", "ctsw", "atsw"],
)
def test_unknown_platform_model_suggests_a_catalog_name(small_data, write_fabric, path, dotted, typo, meant):
    set_at(small_data, path, typo)
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), path), dotted)
    assert typo in given_part(problem)
    allowed = allowed_part(problem)
    assert f"did you mean '{meant}'" in allowed
    assert all(name in allowed for name in BUILTIN_NAMES)  # and lists what the catalog has


def test_duplicate_zone_ids(small_data, write_fabric):
    small_data["zones"][1]["id"] = small_data["zones"][0]["id"]
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), ("zones", 1, "id")), "zones[1].id")
    assert "zones[0]" in problem  # names the zone that already has the id
    assert "allowed: " in problem


@pytest.mark.parametrize(("max_zones", "zone_id"), [(15, 16), (1, 2), (254, 255)])
def test_zone_id_above_max_zones(small_data, write_fabric, max_zones, zone_id):
    small_data["addressing"]["max_zones"] = max_zones
    small_data["zones"][1]["id"] = zone_id
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), ("zones", 1, "id")), "zones[1].id")
    assert str(zone_id) in problem
    assert "max_zones" in problem
    assert str(max_zones) in allowed_part(problem)


def test_zone_id_equal_to_max_zones_is_fine(small_data, write_fabric):
    small_data["addressing"]["max_zones"] = 255
    small_data["zones"][1]["id"] = 255
    result = validate(write_fabric(small_data))
    assert result.exit_code in (0, 1), result.output


# --- user catalogs -------------------------------------------------------------------------------
def write_with_catalog(write_fabric: Callable[..., Path], data: dict[str, Any], catalog: Any) -> tuple[Path, Path]:
    data["catalog"] = "catalog.yaml"
    fabric = write_fabric(data, catalog=catalog)
    return fabric, fabric.parent / "catalog.yaml"


def test_good_user_catalog_is_accepted(small_data, write_fabric):
    small_data["zones"][0]["rtsw_model"] = "lab-rtsw"
    fabric, _ = write_with_catalog(write_fabric, small_data, {"models": {"lab-rtsw": {
        "extends": BUILTIN_RTSW, "description": "lab rack switch", "capabilities": {"bth_dest_qp_hash": True}}}})
    result = validate(fabric)
    assert result.exit_code in (0, 1), result.output


def test_catalog_unknown_extends(small_data, write_fabric):
    fabric, catalog = write_with_catalog(
        write_fabric, small_data, {"models": {"lab-rtsw": {"extends": "arista-7060x6-64pe-sonc"}}})
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, node_marks(catalog.read_text(), ("models", "lab-rtsw", "extends")),
                           "models.lab-rtsw.extends")
    assert "arista-7060x6-64pe-sonc" in problem
    assert BUILTIN_RTSW in allowed_part(problem)


def test_catalog_entry_reusing_a_builtin_name(small_data, write_fabric):
    name = "arista-7060x6-64pe-eos"
    fabric, catalog = write_with_catalog(write_fabric, small_data, {"models": {name: {"extends": BUILTIN_RTSW}}})
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, node_marks(catalog.read_text(), ("models", name)), f"models.{name}")
    assert "built-in" in problem
    assert "extends" in allowed_part(problem)  # tells how to derive from it instead


@pytest.mark.parametrize(
    ("field", "value", "given", "allowed"),
    [
        ("port_count", "many", "'many'", "integer"),
        ("port_count", 0, "0", "1"),
        ("queues", 32, "32", "16"),
        ("asic_family", "tomahawk9", "'tomahawk9'", "tomahawk5"),
        ("max_lossless_priorities", 9, "9", "8"),
    ],
    ids=["port_count-word", "port_count-0", "queues-big", "asic_family", "lossless-priorities-9"],
)
def test_catalog_invalid_field(small_data, write_fabric, field, value, given, allowed):
    fabric, catalog = write_with_catalog(
        write_fabric, small_data, {"models": {"lab-rtsw": {"extends": BUILTIN_RTSW, field: value}}})
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, node_marks(catalog.read_text(), ("models", "lab-rtsw", field)),
                           f"models.lab-rtsw.{field}")
    assert given in given_part(problem)
    if allowed is not None:
        assert allowed in allowed_part(problem)


def test_catalog_unknown_field_suggests_the_close_match(small_data, write_fabric):
    fabric, catalog = write_with_catalog(
        write_fabric, small_data, {"models": {"lab-rtsw": {"extends": BUILTIN_RTSW, "queus": 8}}})
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, node_marks(catalog.read_text(), ("models", "lab-rtsw", "queus")),
                           "models.lab-rtsw.queus")
    assert "unknown key" in problem
    assert "did you mean 'queues'" in allowed_part(problem)


def test_catalog_entry_without_extends_must_be_complete(small_data, write_fabric):
    fabric, catalog = write_with_catalog(
        write_fabric, small_data, {"models": {"lab-rtsw": {"description": "incomplete"}}})
    stderr = assert_input_error(validate(fabric))
    marks = node_marks(catalog.read_text(), ("models", "lab-rtsw"))
    for field in ("vendor", "nos", "port_count", "asic_family"):
        assert "missing" in find_problem(stderr, catalog, marks, f"models.lab-rtsw.{field}")


FAMILY = {"cell_bytes": 254, "buffer_bytes": "100MB", "buffer_source": "my lab"}


@pytest.mark.parametrize(
    ("families", "path", "expect"),
    [
        ({"tomahawk5": FAMILY}, "asic_families.tomahawk5", "already in the built-in catalog"),
        ({"tomahawk9": FAMILY}, "asic_families.tomahawk9", "unknown ASIC family"),
        ({"tomahawk3": {**FAMILY, "buffer_bytes": 1000}}, "asic_families.tomahawk3.buffer_bytes", "unit"),
        ({"tomahawk3": {**FAMILY, "headroom": {"fixed_bytes": 0, "cell_occupancy": 1, "response_ns": 0,
                                                "round_to_bytes": 254}}},
         "asic_families.tomahawk3", "needs the published points"),
    ],
    ids=["duplicate-builtin", "unknown-family", "bytes-without-unit", "formula-without-points"],
)
def test_catalog_asic_family_errors(small_data, write_fabric, families, path, expect):
    fabric, catalog = write_with_catalog(
        write_fabric, small_data, {"models": {}, "asic_families": families})
    stderr = assert_input_error(validate(fabric))
    assert f"{catalog.name}:" in stderr and path in stderr and expect in stderr


def test_catalog_model_needs_its_familys_buffer_facts(small_data, write_fabric):
    fabric, catalog = write_with_catalog(
        write_fabric, small_data, {"models": {"lab-rtsw": {"extends": BUILTIN_RTSW, "asic_family": "tomahawk3"}}})
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, node_marks(catalog.read_text(), ("models", "lab-rtsw", "asic_family")),
                           "models.lab-rtsw.asic_family")
    assert "no buffer facts for ASIC family 'tomahawk3'" in problem and "tomahawk5" in allowed_part(problem)


def test_catalog_self_extends(small_data, write_fabric):
    fabric, catalog = write_with_catalog(write_fabric, small_data, {"models": {"a": {"extends": "a"}}})
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, node_marks(catalog.read_text(), ("models", "a", "extends")),
                           "models.a.extends")
    assert "cycle" in problem


def test_catalog_extends_cycle_reports_what_each_entry_gives(small_data, write_fabric):
    fabric, catalog = write_with_catalog(
        write_fabric, small_data, {"models": {"a": {"extends": "b"}, "b": {"extends": "a"}}})
    stderr = assert_input_error(validate(fabric))
    text = catalog.read_text()
    reported = 0
    for name, parent in (("a", "b"), ("b", "a")):
        try:
            problem = find_problem(stderr, catalog, node_marks(text, ("models", name, "extends")),
                                   f"models.{name}.extends")
        except AssertionError:
            continue  # reporting the cycle once is enough
        reported += 1
        assert "cycle" in problem
        if "given: " in problem:  # if it says what was given, it must be what this entry gives
            assert given_part(problem).startswith(repr(parent)), problem
    assert reported, stderr


@pytest.mark.parametrize(
    "catalog",
    [{"other": {}}, {"models": [1, 2]}, ["models"], {"models": {"a": 5}}],
    ids=["wrong-top-key", "models-list", "top-level-list", "entry-not-mapping"],
)
def test_catalog_wrong_shape(small_data, write_fabric, catalog):
    fabric, catalog_path = write_with_catalog(write_fabric, small_data, catalog)
    stderr = assert_input_error(validate(fabric))
    assert str(catalog_path) in stderr
    assert "models" in stderr


def test_catalog_non_string_model_name(small_data, write_fabric):
    fabric, catalog = write_with_catalog(write_fabric, small_data, f"models:\n  1: {{extends: {BUILTIN_RTSW}}}\n")
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, [(2, 3)], "models.1")
    assert "name" in allowed_part(problem)


@pytest.mark.parametrize("odd_key", ["~", "1", "true"], ids=["null", "int", "bool"])
def test_catalog_non_string_model_name_next_to_unknown_extends(small_data, write_fabric, odd_key):
    text = f"models:\n  lab-base: {{extends: lab-rtsw}}\n  {odd_key}: {{extends: {BUILTIN_RTSW}}}\n"
    fabric, catalog = write_with_catalog(write_fabric, small_data, text)
    stderr = assert_input_error(validate(fabric))
    problem = find_problem(stderr, catalog, node_marks(text, ("models", "lab-base", "extends")),
                           "models.lab-base.extends")
    assert "lab-rtsw" in problem


def test_catalog_file_missing(small_data, write_fabric):
    small_data["catalog"] = "no-such-catalog.yaml"
    fabric = write_fabric(small_data)
    stderr = assert_input_error(validate(fabric))
    find_problem(stderr, fabric.parent / "no-such-catalog.yaml", None, "")
    assert "not found" in stderr


def test_catalog_yaml_syntax_error(small_data, write_fabric):
    fabric, catalog = write_with_catalog(write_fabric, small_data, "models:\n  a: {extends: x\n  b: 1\n")
    stderr = assert_input_error(validate(fabric))
    assert f"{catalog}:" in stderr
    assert "YAML" in stderr


def test_catalog_path_with_unsafe_characters(small_data, write_fabric):
    small_data["catalog"] = "cat alog.yaml;rm -rf"
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    find_problem(stderr, file, node_marks(file.read_text(), ("catalog",)), "catalog")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /dev/zero and RLIMIT_AS")
def test_catalog_that_is_an_endless_device_file(small_data, write_fabric):
    small_data["catalog"] = "/dev/zero"
    fabric = write_fabric(small_data)

    def limit_memory() -> None:  # keep the child from eating the machine
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    proc = subprocess.run(
        [sys.executable, "-m", "netgen.cli", "validate", str(fabric)],
        capture_output=True, text=True, timeout=60, preexec_fn=limit_memory, check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert proc.returncode == EXIT_INPUT, proc.stderr
    assert "/dev/zero" in proc.stderr
    assert "Traceback" not in proc.stderr


# --- files that are not fabric files --------------------------------------------------------------
def test_missing_file(tmp_path):
    target = tmp_path / "nope" / "fabric.yaml"
    stderr = assert_input_error(validate(target))
    find_problem(stderr, target, None, "")
    assert "not found" in stderr


def test_directory_without_fabric_yaml(tmp_path):
    (tmp_path / "other.yaml").write_text("name: x\n")
    stderr = assert_input_error(validate(tmp_path))
    find_problem(stderr, tmp_path, None, "")
    assert "fabric.yaml" in stderr


def test_directory_with_fabric_yml_is_accepted(small_data, tmp_path):
    (tmp_path / "fabric.yml").write_text(dump(small_data))
    shutil.copytree(SMALL.parent / "secrets", tmp_path / "secrets")  # validate reads the hash render reads
    result = validate(tmp_path)
    assert result.exit_code in (0, 1), result.output


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"], ids=["empty", "blank-lines", "comment"])
def test_empty_file(write_fabric, text):
    path = write_fabric(text=text)
    stderr = assert_input_error(validate(path))
    find_problem(stderr, path, None, "")
    assert "empty" in stderr


@pytest.mark.parametrize(
    ("text", "given"),
    [("- name: a\n- name: b\n", "list"), ("just some words\n", "'just some words'"), ("42\n", "42"),
     ("---\n", "None")],
    ids=["list", "string", "number", "null-document"],
)
def test_top_level_is_not_a_mapping(write_fabric, text, given):
    path = write_fabric(text=text)
    stderr = assert_input_error(validate(path))
    problem = find_problem(stderr, path, [(1, 1)], "")
    assert "mapping" in problem
    assert given in given_part(problem)
    assert "name" in allowed_part(problem)


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x1f", "\x7f", "\x80", "\ufffe"],
                         ids=["nul", "bel", "esc", "us", "del", "c1", "ufffe"])
@pytest.mark.parametrize("where", ["value", "comment"])
def test_raw_unprintable_character_in_file(small_data, write_fabric, char, where):
    text = dump(small_data)
    text = text.replace("name: small-lab", f"name: small{char}lab", 1) if where == "value" else (
        text + f"# a comment with {char} in it\n")
    path = write_fabric(text=text)
    stderr = assert_input_error(validate(path))
    assert str(path) in stderr


@pytest.mark.parametrize(
    "raw",
    [b"name: caf\xe9\n", "name: lab\n".encode("utf-16"), b"name: lab\n\xff\xfe\x00\n"],
    ids=["latin-1", "utf-16", "garbage-bytes"],
)
def test_not_utf8(tmp_path, raw):
    path = tmp_path / "fabric.yaml"
    path.write_bytes(raw)
    stderr = assert_input_error(validate(path))
    find_problem(stderr, path, None, "")
    assert "UTF-8" in stderr


def test_file_too_large(tmp_path):
    path = tmp_path / "fabric.yaml"
    with path.open("w") as fh:
        fh.write("name: lab\n")
        fh.write(("#" * 1023 + "\n") * (16 * 1024 + 1))
    started = time.perf_counter()
    stderr = assert_input_error(validate(path))
    assert time.perf_counter() - started < 5
    find_problem(stderr, path, None, "")
    assert "MiB" in stderr or "large" in stderr


# --- alias abuse --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "line"),
    [("a: &a [*a]\n", 1), ("a: &a\n  b: *a\n", 1), ("name: lab\nloop: &l\n  - x\n  - *l\n", 2)],
    ids=["sequence", "mapping", "after-other-keys"],
)
def test_recursive_alias(write_fabric, text, line):
    path = write_fabric(text=text)
    started = time.perf_counter()
    stderr = assert_input_error(validate(path))
    assert time.perf_counter() - started < 5
    assert f"{path}:{line}:" in stderr, stderr
    assert "recursive" in stderr


def test_recursive_alias_inside_real_fabric(small_data, write_fabric):
    text = dump(small_data).replace("frontend_prefixes:\n", "frontend_prefixes: &fp\n- *fp\n", 1)
    path = write_fabric(text=text)
    stderr = assert_input_error(validate(path))
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("frontend_prefixes:"))
    assert f"{path}:{line}:" in stderr or f"{path}:{line + 1}:" in stderr, stderr
    assert "recursive" in stderr


def billion_laughs(levels: int, width: int = 9, mapping: bool = False) -> str:
    lines = ["lol0: &lol0 " + ("{" + ", ".join(f"k{i}: lol" for i in range(width)) + "}" if mapping
                               else "[" + ", ".join(["lol"] * width) + "]")]
    for level in range(1, levels + 1):
        refs = (f"k{i}: *lol{level - 1}" for i in range(width)) if mapping else [f"*lol{level - 1}"] * width
        body = "{" + ", ".join(refs) + "}" if mapping else "[" + ", ".join(refs) + "]"
        lines.append(f"lol{level}: &lol{level} {body}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("mapping", [False, True], ids=["sequences", "mappings"])
def test_alias_bomb_is_rejected_quickly(write_fabric, mapping):
    text = billion_laughs(9, mapping=mapping)  # 9**10 nodes once expanded
    assert len(text) < 2000
    path = write_fabric(text=text)
    started = time.perf_counter()
    stderr = assert_input_error(validate(path))
    elapsed = time.perf_counter() - started
    assert elapsed < 5, f"alias bomb took {elapsed:.1f}s"
    assert str(path) in stderr
    assert "alias" in stderr.lower()


def test_ordinary_aliases_still_work():
    # the shipped example uses an anchor and a merge key for its second zone
    assert "<<: *zone" in SMALL.read_text()
    result = validate(SMALL)
    assert result.exit_code in (0, 1), result.output


def test_deep_nesting(write_fabric):
    path = write_fabric(text="name: " + "[" * 3000 + "]" * 3000 + "\n")
    stderr = assert_input_error(validate(path))
    assert str(path) in stderr


# --- JSON output ----------------------------------------------------------------------------------
def test_json_form_of_input_errors(small_data, write_fabric):
    small_data["zones"][0]["racks"] = "four"
    small_data["zones"][0]["ctsw_cout"] = small_data["zones"][0].pop("ctsw_count")
    file = write_fabric(small_data)
    result = validate(file, "--json")
    assert result.exit_code == EXIT_INPUT
    assert "Traceback" not in result.output
    payload = json.loads(result.stdout)
    assert payload["ok"] is False
    assert payload["exit_code"] == EXIT_INPUT
    errors = payload["input_errors"]
    assert isinstance(errors, list)
    for entry in errors:
        assert {"file", "line", "column", "path", "message", "given", "allowed"} <= set(entry)
        assert entry["file"] == str(file)
    text = file.read_text()
    by_path = {e["path"]: e for e in errors}
    racks = by_path["zones[0].racks"]
    assert (racks["line"], racks["column"]) in node_marks(text, ("zones", 0, "racks"))
    assert "four" in racks["given"]
    assert "integer" in racks["allowed"]
    typo = by_path["zones[0].ctsw_cout"]
    assert (typo["line"], typo["column"]) in node_marks(text, ("zones", 0, "ctsw_cout"))
    assert "did you mean 'ctsw_count'" in typo["allowed"]
    missing = by_path["zones[0].ctsw_count"]
    assert (missing["line"], missing["column"]) in node_marks(text, ("zones", 0))
    assert "missing" in missing["message"]


# --- injection into anything that can reach a device config -------------------------------------------
PAYLOADS = {
    "newline": "\n",
    "cr": "\r",
    "crlf": "\r\n",
    "bang": "!",
    "hash": "#",
    "nul": "\x00",
    "bel": "\x07",
    "ansi": "\x1b[31m",
    "tab": "\t",
    "dquote": '"',
    "squote": "'",
    "u2028": "\u2028",
    "nel": "\x85",
    "jinja": "{{ x }}",
    "shell": "$(x)",
    "backtick": "`x`",
}


def _set(path: tuple[str | int, ...]) -> Callable[[dict[str, Any], str], None]:
    def setter(data: dict[str, Any], value: str) -> None:
        set_at(data, path, value)

    return setter


def _override_key(data: dict[str, Any], value: str) -> None:
    data["asn"]["overrides"] = {value: 4_200_000_999}


def _catalog_with(field: str) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    """A user catalog with a used model `lab-rtsw` (zone 1's RTSWs) and an unused one `lab-spare`;
    `field` of the used model (or the name of the unused one) carries the value."""

    def setter(data: dict[str, Any], value: str) -> dict[str, Any]:
        data["catalog"] = "catalog.yaml"
        data["zones"][0]["rtsw_model"] = "lab-rtsw"
        used = {"extends": BUILTIN_RTSW, "description": "lab rack switch", "vendor": "arista",
                "nos_release": "master 2026-08", "capabilities": {"bth_dest_qp_hash": True}}
        spare = "lab-spare"
        if field == "name":
            spare = value
        else:
            used[field] = value
        return {"models": {"lab-rtsw": used, spare: {"extends": BUILTIN_RTSW}}}

    return setter


Setter = Callable[[dict[str, Any], str], Any]
PathCheck = Callable[[str], bool]
# field -> (clean base value, setter(data, value) -> user catalog or None, file, expected path or check)
FIELDS: dict[str, tuple[str, Setter, str, str | PathCheck]] = {
    "fabric.name": ("small-lab", _set(("name",)), "fabric", "name"),
    "fabric.description": ("Two small AI zones", _set(("description",)), "fabric", "description"),
    "fabric.hostname_prefix": ("snc1-", _set(("hostname_prefix",)), "fabric", "hostname_prefix"),
    "zones[].description": ("Hall A", _set(("zones", 0, "description")), "fabric", "zones[0].description"),
    "zones[].rtsw_model": (BUILTIN_RTSW, _set(("zones", 0, "rtsw_model")), "fabric", "zones[0].rtsw_model"),
    "zones[].ctsw_model": ("arista-7804r3a-36p-eos", _set(("zones", 1, "ctsw_model")), "fabric",
                           "zones[1].ctsw_model"),
    "aggregation.atsw_model": ("arista-7804r3a-36p-eos", _set(("aggregation", "atsw_model")), "fabric",
                               "aggregation.atsw_model"),
    "qos.lossless.name": ("roce", _set(("qos", "lossless", "name")), "fabric", "qos.lossless.name"),
    "qos.cts.name": ("cts", _set(("qos", "cts", "name")), "fabric", "qos.cts.name"),
    "qos.classes[].name": ("best-effort", _set(("qos", "classes", 0, "name")), "fabric", "qos.classes[0].name"),
    "asn.overrides(key)": ("z01-rtsw001", _override_key, "fabric", lambda p: p.startswith("asn.overrides")),
    "catalog.models(name)": ("lab-spare", _catalog_with("name"), "catalog",
                             lambda p: p.startswith("models.") and not p.startswith("models.lab-rtsw")),
    "catalog.description": ("lab rack switch", _catalog_with("description"), "catalog",
                            "models.lab-rtsw.description"),
    "catalog.vendor": ("arista", _catalog_with("vendor"), "catalog", "models.lab-rtsw.vendor"),
    "catalog.nos_release": ("master 2026-08", _catalog_with("nos_release"), "catalog",
                            "models.lab-rtsw.nos_release"),
}

# Python's `$` also matches before a trailing newline; this is the one payload placement that
# exposes a check done with `re.match(pattern)` instead of pydantic's (Rust) regex.
KNOWN_BUGS: dict[tuple[str, str, str], str] = {}


def _injection_cases() -> list[Any]:
    cases = []
    for field, (base, *_rest) in FIELDS.items():
        values = {"x-newline-end": "x\nend"}
        for name, payload in PAYLOADS.items():
            half = len(base) // 2
            values[f"{name}-mid"] = base[:half] + payload + base[half:]
            values[f"{name}-end"] = base + payload
        for case, value in values.items():
            payload_name, _, where = case.rpartition("-")
            reason = KNOWN_BUGS.get((field, payload_name, where))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(field, value, id=f"{field}:{case}", marks=marks))
    return cases


def _write_injection(write_fabric: Callable[..., Path], data: dict[str, Any], field: str, value: str) -> Path:
    _base, setter, _file, _expect = FIELDS[field]
    catalog = setter(data, value)
    fabric = write_fabric(data, catalog=catalog)
    # the YAML round trip must carry the payload unchanged, or the test would prove nothing
    if catalog is not None:
        assert yaml.safe_load((fabric.parent / "catalog.yaml").read_text()) == catalog
    else:
        assert yaml.safe_load(fabric.read_text()) == data
    return fabric


@pytest.mark.parametrize("field", list(FIELDS))
def test_injection_baseline_is_accepted(small_data, write_fabric, field):
    """The clean base value of every field loads, so a rejection below is caused by the payload."""
    fabric = _write_injection(write_fabric, small_data, field, FIELDS[field][0])
    result = validate(fabric)
    assert result.exit_code in (0, 1), result.output


@pytest.mark.parametrize(("field", "value"), _injection_cases())
def test_injection_is_rejected_naming_the_field(small_data, write_fabric, field, value):
    _base, _setter, which, expect = FIELDS[field]
    fabric = _write_injection(write_fabric, small_data, field, value)
    result = validate(fabric, "--json")
    assert result.exit_code == EXIT_INPUT, f"{value!r} in {field} was accepted:\n{result.output}"
    assert "Traceback" not in result.output
    payload = json.loads(result.stdout)
    assert payload["exit_code"] == EXIT_INPUT
    file = str(fabric if which == "fabric" else fabric.parent / "catalog.yaml")
    matches = [
        e for e in payload["input_errors"]
        if e["file"] == file and (expect(e["path"]) if callable(expect) else e["path"] == expect)
    ]
    assert matches, f"no error names {field}: {payload['input_errors']}"
    assert all(e["line"] is not None for e in matches)


def test_every_config_string_field_is_pattern_restricted():
    """Every string the models keep as text (not parsed into a number, enum or address) has a pattern:
    a new free-text field cannot slip past the injection guard unnoticed."""
    unrestricted: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "str" and "pattern" not in node:
                unrestricted.append(where)
            for key, value in node.items():
                # serializers and the strict (already-typed) branch of IP address types are not input text
                if key in ("serialization", "strict_schema", "metadata"):
                    continue
                walk(value, f"{where}/{key}")
        elif isinstance(node, list | tuple):
            for index, value in enumerate(node):
                walk(value, f"{where}/{index}")

    walk(Fabric.__pydantic_core_schema__, "Fabric")
    walk(Catalog.__pydantic_core_schema__, "Catalog")
    assert not unrestricted, unrestricted


# --- the error output itself must be safe to print ------------------------------------------------------
def _raw_key_cases() -> list[Any]:
    def unknown_key(data: dict[str, Any]) -> None:
        data["zones"][0]["ctsw_cout\x1b[31m"] = 4

    def override_key(data: dict[str, Any]) -> None:
        data["asn"]["overrides"] = {"z01-rtsw001\nwarning: fake": 4_200_000_999}

    def catalog_name(data: dict[str, Any]) -> Any:
        data["catalog"] = "catalog.yaml"
        return {"models": {"spare\r\x1b[2Kok": {"extends": BUILTIN_RTSW}}}

    return [pytest.param(f, id=f.__name__) for f in (unknown_key, override_key, catalog_name)]


@pytest.mark.parametrize("mutate", _raw_key_cases())
def test_error_output_escapes_control_characters_in_keys(small_data, write_fabric, mutate):
    catalog = mutate(small_data)
    fabric = write_fabric(small_data, catalog=catalog)
    stderr = assert_input_error(validate(fabric))
    problems = json.loads(validate(fabric, "--json").stdout)["input_errors"]
    assert not any(ch in stderr for ch in "\x1b\r\x00\x07"), repr(stderr)
    # one line per problem plus the summary line
    assert len(stderr.splitlines()) == len(problems) + 1, repr(stderr)


def test_error_output_escapes_control_characters_in_values(small_data, write_fabric):
    small_data["name"] = "lab\nerror: fake\x1b[31m"
    stderr = assert_input_error(validate(write_fabric(small_data)))
    assert not any(ch in stderr for ch in "\x1b\r\x00\x07"), repr(stderr)
    assert "fake" in stderr  # shown, but escaped on the same line
    assert all(line.startswith("error: ") or "input error" in line for line in stderr.splitlines())


def test_error_output_shows_the_given_value_verbatim(small_data, write_fabric):
    small_data["name"] = "x:smile:y!"
    file = write_fabric(small_data)
    stderr = assert_input_error(validate(file))
    problem = find_problem(stderr, file, node_marks(file.read_text(), ("name",)), "name")
    assert "x:smile:y!" in given_part(problem)
