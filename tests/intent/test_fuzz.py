"""Property-based robustness tests: whatever a fabric (or catalog) file holds, `netgen validate` answers
with exit code 0, 1 or 2 and a message; never 3 (internal error), never a leaked exception, never a
traceback (netgen/cli.py: "no traceback ever reaches the user for bad input").

Inputs are random mutations of the small example fabric (so most of them get past the YAML parser and
deep into validation, expansion and the design checks), random text, random YAML-ish token soup,
random edits of the example file's text, and random bytes.
"""

from __future__ import annotations

import copy
import itertools
import json
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
from pydantic import BaseModel

from netgen.intent.catalog import PlatformModel
from netgen.intent.fabric import Fabric
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

SMALL_TEXT = SMALL.read_text()
SMALL_DATA: dict[str, Any] = yaml.safe_load(SMALL_TEXT)
BUILTIN_RTSW = "arista-7060x6-64pe-sonic"

# NETGEN_FUZZ_SCALE=20 runs twenty times more examples (for a nightly job or before a release).
SCALE = float(os.environ.get("NETGEN_FUZZ_SCALE", "1"))


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


FUZZ = settings(
    deadline=None,
    database=None,  # keep the run self-contained (no .hypothesis directory next to the project)
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# --- writing files ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("fuzz")


_counter = itertools.count()


def write_case(base: Path, *, text: str | None = None, raw: bytes | None = None, data: Any = None,
               catalog: Any = None) -> Path:
    """A fresh directory with fabric.yaml (and catalog.yaml); works across hypothesis examples."""
    folder = base / f"case{next(_counter)}"
    folder.mkdir()
    path = folder / "fabric.yaml"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(text if text is not None else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (folder / "secrets").symlink_to(SMALL.parent / "secrets")  # the hash validate reads, as render does
    if catalog is not None:
        (folder / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False), encoding="utf-8")
    return path


def assert_handled(result: Result, as_json: bool = False) -> None:
    """The CLI contract for any input: a documented exit code and no traceback."""
    assert result.exit_code in (0, 1, 2), (
        f"exit {result.exit_code} (3 = internal error)\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stdout
    assert "Traceback" not in result.stderr
    if result.exit_code == 2 and not as_json:
        assert result.stderr.strip(), "an input error must be explained on stderr"


# --- strategies ----------------------------------------------------------------------------------------
def _model_field_names(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[str]:
    seen = set() if seen is None else seen
    if model in seen:
        return set()
    seen.add(model)
    names = set(model.model_fields)
    for info in model.model_fields.values():
        stack = [info.annotation]
        while stack:
            annotation = stack.pop()
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                names |= _model_field_names(annotation, seen)
            stack.extend(getattr(annotation, "__args__", ()))
    return names


# Real field names make "add a key" hit known fields (and duplicates of merged ones) often.
FIELD_NAMES = sorted(_model_field_names(Fabric) | _model_field_names(PlatformModel) | {"extends", "models", "<<"})

CHARS = st.characters(codec="utf-8")  # every code point except surrogates, including control characters
NASTY = st.sampled_from([
    "", " ", "\n", "x\nend", "!", "#", "\x00", "\x07", "\x1b[31m", "'", '"', "~", "null", "yes", "off",
    "0x1F", "0o17", "1_000", "1e309", "-.inf", ".nan", "400G", "0G", "1600G", "1:7", "0:0", "1:0", "150KB",
    "1.5MiB", "0B", "10.0.0.0/8", "10.0.0.1/8", "::/0", "fd00::/128", "10.0.0.0/33", "0.0.0.0/0",
    BUILTIN_RTSW, "arista-7804r3a-36p-eos", "catalog.yaml", "fabric.yaml", ".", "..", "/dev/null", "{{ x }}",
    "%s", "\u2028", "\ufeff", "9" * 400, "a" * 64, "shared", "static_per_port", "bth_dest_qp", "drop",
])
INTS = st.one_of(
    st.integers(min_value=-3, max_value=70),
    st.sampled_from([0, -1, 127, 128, 255, 256, 512, 1023, 65535, 2**31, 2**32, 2**63, -(2**63), 10**30]),
)
SCALARS = st.one_of(
    st.none(), st.booleans(), INTS, st.floats(allow_nan=True, allow_infinity=True),
    st.text(CHARS, max_size=20), NASTY,
)
KEYS = st.one_of(st.sampled_from(FIELD_NAMES), st.text(CHARS, max_size=12), st.integers(-2, 5), st.none())
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=10,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*prefix, index))
    return out


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def mutations_of(draw: st.DrawFn, document: Any, max_ops: int = 4) -> Any:
    """`document` with 1..max_ops random edits: replace a leaf or subtree, delete a key or item, add a
    key or item. Edits apply one after the other, so later ones can land inside earlier ones."""
    data = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_ops))):
        path = draw(st.sampled_from(_paths(data)))
        op = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if op == "replace":
            value = draw(VALUES)
            if path:
                _at(data, path[:-1])[path[-1]] = value
            else:
                data = value
        elif op == "delete":
            if path:
                del _at(data, path[:-1])[path[-1]]
        else:
            target = _at(data, path)
            if isinstance(target, dict):
                target[draw(KEYS)] = draw(VALUES)
            elif isinstance(target, list):
                target.insert(draw(st.integers(0, len(target))), draw(VALUES))
            elif path:  # a scalar: put a container in its place
                _at(data, path[:-1])[path[-1]] = draw(st.one_of(st.lists(VALUES, max_size=3),
                                                               st.dictionaries(KEYS, VALUES, max_size=3)))
    return data


YAML_TOKENS = [
    "\n", "  ", " ", "\t", "-", "- ", ":", ": ", "? ", ",", "[", "]", "{", "}", "&a ", "*a", "&b ", "*b",
    "<<: ", "<<: *a", "!!str ", "!!map ", "!!seq ", "!!binary ", "!!null ", "!!python/object:os.system ",
    "!x ", "%YAML 1.1\n", "%TAG ! tag:x:\n", "---\n", "...\n", "|\n", ">-\n", "#", "'", '"', "\\", "\x00",
    "\ufeff", "\u2028", "\x85", "name", "zones", "id", "racks", "addressing", "catalog", "1", "-1", "0x1",
    "1e9", ".nan", "~", "null", "true", "10.0.0.0/8", "400G", "éü", "😀",
]
YAML_TOKENS += ["!!int ", "!!float ", "!!bool ", "!!timestamp "]  # tagged scalars that may not parse
YAML_SOUP = st.lists(st.sampled_from(YAML_TOKENS), max_size=60).map("".join)

# Characters YAML forbids in a stream. The loader must reject them cleanly; `printable()` is kept
# for the fuzzers that want to reach past the reader into the models.
_UNPRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def printable(text: str) -> str:
    return _UNPRINTABLE.sub("?", text)


def printable_bytes(raw: bytes) -> bytes:
    try:
        return printable(raw.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return raw  # rejected as not UTF-8 before YAML sees it


@st.composite
def edits_of_small_text(draw: st.DrawFn) -> str:
    """The example fabric.yaml (comments, anchors, merge key and all) with a few raw text edits."""
    text = SMALL_TEXT
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 40)))
        insert = draw(st.one_of(st.just(""), st.sampled_from(YAML_TOKENS), st.text(CHARS, max_size=8)))
        text = text[:start] + insert + text[end:]
    return text


# --- (a) random mutations of the example fabric ------------------------------------------------------
@settings(FUZZ, max_examples=examples(200))
@given(data=mutations_of(SMALL_DATA))
def test_mutated_fabric_is_handled(workdir, data):
    assert_handled(run_cli("validate", str(write_case(workdir, data=data))))


def _catalog_fabric() -> tuple[dict[str, Any], dict[str, Any]]:
    fabric = copy.deepcopy(SMALL_DATA)
    fabric["catalog"] = "catalog.yaml"
    fabric["zones"][0]["rtsw_model"] = "lab-rtsw"
    catalog = {"models": {
        "lab-rtsw": {"extends": BUILTIN_RTSW, "description": "lab rack switch",
                     "capabilities": {"bth_dest_qp_hash": True}, "buffer_bytes": "100MB"},
        "lab-base": {"extends": "lab-rtsw", "queues": 8},
    }}
    return fabric, catalog


CATALOG_FABRIC, CATALOG = _catalog_fabric()


@settings(FUZZ, max_examples=examples(80))
@given(catalog=mutations_of(CATALOG, max_ops=3))
def test_mutated_user_catalog_is_handled(workdir, catalog):
    assert_handled(run_cli("validate", str(write_case(workdir, data=CATALOG_FABRIC, catalog=catalog))))


# --- (b) random text ---------------------------------------------------------------------------------
@settings(FUZZ, max_examples=examples(200))
@given(text=st.one_of(st.text(CHARS, max_size=300), YAML_SOUP, edits_of_small_text()))
def test_random_text_is_handled(workdir, text):
    assert_handled(run_cli("validate", str(write_case(workdir, text=text))))


@settings(FUZZ, max_examples=examples(60))
@given(raw=st.one_of(
    st.binary(max_size=300),
    st.binary(max_size=20).map(lambda b: SMALL_TEXT.encode()[:500] + b + SMALL_TEXT.encode()[500:]),
))
def test_random_bytes_are_handled(workdir, raw):
    assert_handled(run_cli("validate", str(write_case(workdir, raw=raw))))


# --- (c) --json always prints one JSON document that agrees with the exit code ----------------------
@settings(FUZZ, max_examples=examples(120))
@given(data=mutations_of(SMALL_DATA))
def test_json_output_matches_exit_code(workdir, data):
    result = run_cli("validate", "--json", str(write_case(workdir, data=data)))
    assert_handled(result, as_json=True)
    payload = json.loads(result.stdout)
    assert payload["exit_code"] == result.exit_code
    assert payload["ok"] is (result.exit_code == 0)
    if result.exit_code == 2:
        assert payload["input_errors"], payload
        for problem in payload["input_errors"]:
            assert {"file", "line", "path", "message"} <= set(problem)
            assert isinstance(problem["message"], str)
            assert problem["message"]
            assert problem["line"] is None or (isinstance(problem["line"], int) and problem["line"] >= 1)
    else:
        assert isinstance(payload["findings"], list)
        assert payload["errors"] == sum(1 for f in payload["findings"] if f["severity"] == "error")
        assert (payload["errors"] > 0) is (result.exit_code == 1)


# --- (d) `show` summarises whatever `validate` accepts --------------------------------------------
@settings(FUZZ, max_examples=examples(60))
@given(data=mutations_of(SMALL_DATA, max_ops=2))
def test_show_json_is_handled(workdir, data):
    result = run_cli("show", "--json", str(write_case(workdir, data=data)))
    assert_handled(result, as_json=True)
    payload = json.loads(result.stdout)
    assert payload["exit_code"] == result.exit_code
