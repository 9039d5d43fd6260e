"""The YAML input limits (netgen/intent/yaml_source.py, docs/reference/input-limits.md).

A file one unit over a limit is refused while it is read: exit 2, naming the limit, the file and
(for what is inside the file) the line and column where the limit was crossed. A file exactly at
the limits validates within a bound: the goal is 10 s and 500 MB on the CI machine; the test
asserts the memory (the peak RSS of the `netgen validate` process, from wait4) and CPU time (five
times the goal, so that a busy machine cannot fail it), never wall time. The files are those
benchmarks/input_caps.py measures: the small example plus one part at a limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.input_caps import CASES, Limits, validate, write_case
from tests.conftest import run_cli

pytestmark = pytest.mark.render

# The limits as docs/reference/input-limits.md documents them.
LIMITS = Limits(file_bytes=16 * 1024 * 1024, nodes=250_000, text=16 * 1024 * 1024, list_items=50_000,
                mapping_keys=50_000, depth=64)
GOAL_CPU_S, GOAL_MB = 10, 500
# What the problem of each file one unit over must name: the limit, as the message words it.
OVER_MESSAGE = {
    "list": "more than 50,000 items", "keys": "more than 50,000 keys", "depth": "more than 64 levels",
    "nodes": "more than 250,000 nodes", "aliases": "more than 250,000 nodes",
    "alias-text": "more than 16,777,216 characters", "bytes": "larger than 16 MiB",
}
# The exit code of each file at the limits: the parts the loader lets through reach the models,
# which take a list of switch names or CONFIG_DB rows, and refuse lists where a name belongs.
AT_EXIT = {"list": 0, "keys": 0, "depth": 2, "nodes": 0, "aliases": 2, "alias-text": 2, "bytes": 0}


def test_the_documented_limits_are_the_loaders():
    from netgen.intent import yaml_source  # noqa: PLC0415

    loaders = Limits(yaml_source.MAX_FILE_BYTES, yaml_source.MAX_NODES, yaml_source.MAX_TEXT,
                     yaml_source.MAX_LIST_ITEMS, yaml_source.MAX_MAPPING_KEYS, yaml_source.MAX_DEPTH)
    assert loaders == LIMITS
    documented = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "input-limits.md").read_text()
    for figure in ("16 MiB", "250,000", "16,777,216", "50,000", "64"):
        assert figure in documented, figure


def _crossing_line(case: str, text: str) -> int | None:
    """The 1-based line of the node that crosses the limit in the file one unit over it."""
    lines = text.splitlines()
    if case == "bytes":
        return None  # the whole file: refused before it is parsed
    if case in ("list", "keys"):
        header = "    devices:" if case == "list" else "      SYSLOG_SERVER:"
        return lines.index(header) + 1 + LIMITS.list_items + 1  # the first item over, after the header
    return len(lines)  # the last node of the file: the deepest list, the last scalar


@pytest.mark.parametrize("case", list(CASES))
def test_one_over_a_limit_is_refused_naming_the_limit_and_where(tmp_path, case):
    text = CASES[case](LIMITS, 1)
    fabric = write_case(tmp_path / case, text)
    result = run_cli("validate", "--json", str(fabric))
    assert result.exit_code == 2, result.output[-3000:]
    problems = json.loads(result.stdout)["input_errors"]
    assert len(problems) == 1, problems
    problem = problems[0]
    assert OVER_MESSAGE[case] in problem["message"], problem
    assert "input limits" in (problem["allowed"] or ""), problem
    assert problem["file"] == str(fabric)
    line = _crossing_line(case, text)
    assert problem["line"] == line, problem
    assert (problem["column"] is None) == (line is None), problem
    text_result = run_cli("validate", str(fabric))
    where = f"{fabric}:{line}:{problem['column']}: " if line else f"{fabric}: "
    assert text_result.exit_code == 2 and where in text_result.stderr, text_result.stderr[-3000:]
    assert "Traceback" not in text_result.output


@pytest.mark.parametrize("case", list(CASES))
def test_a_file_at_the_limits_validates_within_the_bounds(tmp_path, case):
    fabric = write_case(tmp_path / case, CASES[case](LIMITS, 0))
    run = validate(fabric)
    assert run.exit_code == AT_EXIT[case], run.stdout[-3000:] + run.stderr[-3000:]
    payload = json.loads(run.stdout)
    assert payload["exit_code"] == run.exit_code
    assert not any("input limits" in (problem["allowed"] or "") for problem in payload.get("input_errors", []))
    assert "Traceback" not in run.stderr
    assert run.peak_mb < GOAL_MB, f"{case}: peak RSS {run.peak_mb:.0f} MB"
    assert run.cpu_s < 5 * GOAL_CPU_S, f"{case}: {run.cpu_s:.1f} s of CPU"
