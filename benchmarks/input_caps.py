"""What a file at netgen's input limits costs: `netgen validate` on generated fabric files.

Run by hand:  python benchmarks/input_caps.py [--runs N] [CASE ...]
Each case is the small example (inventory/small) with one more part that sits exactly at one of
the YAML input limits (netgen/intent/yaml_source.py, docs/reference/input-limits.md):
  list      a custom_config block whose `devices:` lists MAX_LIST_ITEMS switch names
  keys      a custom_config block whose CONFIG_DB table has MAX_MAPPING_KEYS keys
  depth     a value nested MAX_DEPTH levels deep (the document's top level being 1)
  nodes     custom_config blocks filling the document to MAX_NODES nodes, no alias
  aliases   a billion-laughs tree of anchors and aliases expanding to MAX_NODES nodes
  alias-text  a long scalar behind an anchor, repeated by aliases to MAX_TEXT characters
  bytes     200 custom_config blocks of EOS lines at their own limits (64,000 characters, 500
            lines), then comment lines to MAX_FILE_BYTES bytes
and prints, for each, the median wall time, CPU time (user + system) and peak RSS of
`netgen validate` in a subprocess over N runs, with its exit code. Goal (issue 36): within 10 s and
500 MB each. The same generators, one unit over each limit, give the files that must be refused
(tests/intent/test_input_caps.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import cycle, islice
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "inventory" / "small"
NETGEN = [sys.executable, "-m", "netgen.cli"]
# Bytecode is written as on a user's machine (see benchmarks/scale.py); the netgen measured is the
# one beside this file, whatever the interpreter has installed
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
# switches of the small example, EOS (zone 2) and SONiC (zone 1), that the generated scopes name
SWITCHES = ("z01-rtsw001", "z01-rtsw002", "z01-ctsw01", "z02-rtsw001", "z02-rtsw002", "z02-ctsw01")
BLOCK_OVERHEAD = 7  # nodes of a generated custom_config block besides its devices: see _scoped_block
EOS_BLOCK_CHARS, EOS_BLOCK_LINES, EOS_BLOCKS = 64_000, 500, 200  # custom_config's own limits (intent/custom.py)


@dataclass(frozen=True)
class Limits:
    """The limits the inputs are generated for (yaml_source's, or a test's own copy of them)."""

    file_bytes: int
    nodes: int
    text: int
    list_items: int
    mapping_keys: int
    depth: int


def loader_limits() -> Limits:
    from netgen.intent import yaml_source  # noqa: PLC0415  (a test copies the files without the limits)

    return Limits(yaml_source.MAX_FILE_BYTES, yaml_source.MAX_NODES, yaml_source.MAX_TEXT, yaml_source.MAX_LIST_ITEMS,
                  yaml_source.MAX_MAPPING_KEYS, yaml_source.MAX_DEPTH)


def small_text() -> str:
    """The small example's fabric file, whose last section is custom_config: generated blocks are
    appended to that list."""
    text = (SMALL / "fabric.yaml").read_text()
    assert text.rstrip("\n").splitlines()[-1].startswith("        "), "custom_config is no longer last"
    return text.rstrip("\n") + "\n"


def expanded(text: str) -> tuple[int, int]:
    """Nodes and scalar characters of a YAML document with every alias expanded: what the loader
    counts against MAX_NODES and MAX_TEXT."""
    def count(node: yaml.Node) -> tuple[int, int]:
        children = ([item for pair in node.value for item in pair] if isinstance(node, yaml.MappingNode)
                    else node.value if isinstance(node, yaml.SequenceNode) else [])
        nodes, characters = 1, 0 if children or not isinstance(node, yaml.ScalarNode) else len(node.value)
        for child in children:
            more = count(child)
            nodes, characters = nodes + more[0], characters + more[1]
        return nodes, characters
    root = yaml.compose(text, Loader=yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    return count(root) if root is not None else (0, 0)


def expanded_nodes(text: str) -> int:
    return expanded(text)[0]


def _scoped_block(name: str, devices: int) -> str:
    """A block of one EOS line for `devices` switch names: BLOCK_OVERHEAD + devices nodes."""
    names = "".join(f"      - {switch}\n" for switch in islice(cycle(SWITCHES), devices))
    return f"  - name: {name}\n    eos_cli: queue-monitor length\n    devices:\n{names}"


def longest_list(limits: Limits, over: int = 0) -> str:
    return small_text() + _scoped_block("big-scope", limits.list_items + over)


def most_keys(limits: Limits, over: int = 0) -> str:
    keys = "".join(f"          10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}: {{}}\n"
                   for n in range(limits.mapping_keys + over))
    return small_text() + f"  - name: big-table\n    sonic_config_db:\n      SYSLOG_SERVER:\n{keys}"


def deepest(limits: Limits, over: int = 0) -> str:
    # the top level (1) -> custom_config's list (2) -> a block (3) -> its devices list (4), the
    # outermost of the nested lists: the innermost is at depth 3 + levels
    levels = limits.depth - 3 + over
    nested = "[" * levels + "]" * levels
    return small_text() + f"  - name: deep\n    eos_cli: queue-monitor length\n    devices: {nested}\n"


def most_nodes(limits: Limits, over: int = 0) -> str:
    text = small_text()
    left = limits.nodes + over - expanded_nodes(text)
    blocks = []
    while left > 0:
        devices = min(limits.list_items, left - BLOCK_OVERHEAD)
        if devices < 1:  # too few nodes left for one more block: the previous one takes them
            raise ValueError("the limits leave a remainder no block can take")
        blocks.append(_scoped_block(f"big-{len(blocks)}", devices))
        left -= BLOCK_OVERHEAD + devices
    return text + "".join(blocks)


def alias_expansion(limits: Limits, over: int = 0) -> str:
    """Anchors of ten aliases each to the one before, as in "billion laughs", referred to again
    until the document expands to the limit, the rest made up by a plain list."""
    width = 10
    head = small_text() + "  - name: laughs\n    eos_cli: queue-monitor length\n    devices:\n"
    # nodes left for the items of the devices list: the file with one scalar item, less that item
    left = limits.nodes + over - expanded_nodes(head + "      - pad\n") + 1
    lines = [f"      - &l0 [{', '.join(['lol'] * width)}]"]
    sizes = [1 + width]  # nodes each anchor stands for
    left -= sizes[0]
    while 1 + width * sizes[-1] <= left - 2:  # each level keeps room for the closing list and a scalar
        level = len(sizes)
        lines.append(f"      - &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
        sizes.append(1 + width * sizes[-1])
        left -= sizes[-1]
    for level in range(len(sizes) - 1, -1, -1):
        while sizes[level] <= left - 2:  # keep room for the closing list, at least one scalar in it
            lines.append(f"      - *l{level}")
            left -= sizes[level]
    if left < 2 or left - 1 > limits.list_items:
        raise ValueError("the limits leave a remainder no list can take")
    lines.append(f"      - [{', '.join(['pad'] * (left - 1))}]")
    return head + "\n".join(lines) + "\n"


def alias_text(limits: Limits, over: int = 0) -> str:
    """One long scalar behind an anchor, repeated by aliases until the document's scalars hold the
    limit's characters: what an alias bomb of text costs."""
    head = small_text() + "  - name: laughs-text\n    eos_cli: queue-monitor length\n    devices:\n"
    left = limits.text + over - (expanded(head + "      - x\n")[1] - 1)  # characters of the devices' items
    size = min(1 << 20, left // 2)
    repeats, rest = divmod(left - size, size)  # the anchored scalar, its aliases, one more scalar
    if rest == 0:
        repeats, rest = repeats - 1, size
    lines = [f"      - &text {'x' * size}", *["      - *text"] * repeats, f"      - {'x' * rest}"]
    return head + "\n".join(lines) + "\n"


def biggest_file(limits: Limits, over: int = 0) -> str:
    """The most a file may weigh, mostly custom EOS blocks at their own limits (as many blocks as
    custom_config takes), padded with comments."""
    text = small_text()
    body = EOS_BLOCK_CHARS // EOS_BLOCK_LINES - 1  # characters of each line, its newline aside
    blocks = []
    for number in range(EOS_BLOCKS - len(yaml.safe_load(text)["custom_config"])):
        header = f"ip access-list big-{number:03}"
        entries = [f"   {10 * n:05} remark " + "x" * (body - 16) for n in range(1, EOS_BLOCK_LINES)]
        lines = "".join(f"      {line}\n" for line in [header, *entries])
        blocks.append(f"  - name: big-{number:03}\n    eos_cli: |\n{lines}")
    text += "".join(blocks)
    left = limits.file_bytes + over - len(text.encode())
    if left < 2:
        raise ValueError("the blocks alone are over the byte limit")
    comment = "#" + "x" * 1022 + "\n"
    text += comment * (left // len(comment))
    left %= len(comment)
    return text + ("#" + "x" * (left - 2) + "\n" if left >= 2 else "\n" * left)


CASES: dict[str, Callable[[Limits, int], str]] = {
    "list": longest_list, "keys": most_keys, "depth": deepest, "nodes": most_nodes, "aliases": alias_expansion,
    "alias-text": alias_text, "bytes": biggest_file,
}


def write_case(folder: Path, text: str) -> Path:
    """A fabric folder holding `text` as fabric.yaml, with the small example's secret files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fabric.yaml").write_text(text)
    if not (folder / "secrets").exists():
        shutil.copytree(SMALL / "secrets", folder / "secrets")
    return folder / "fabric.yaml"


@dataclass(frozen=True)
class Run:
    exit_code: int
    seconds: float  # wall
    cpu_s: float  # user + system
    peak_mb: float
    stdout: str
    stderr: str


# Runs its arguments as a child and writes that child's own resource usage (wait4) as JSON to the
# file named first. Linux keeps a process's peak RSS across exec, and a child forked from a large
# process (a pytest session of a gigabyte) starts with its parent's pages counted: measured from
# this small interpreter, the peak is netgen's own, whatever ran the benchmark or the test.
_MEASURE = """
import json, os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as report:
    json.dump({"exit": os.waitstatus_to_exitcode(status), "cpu_s": usage.ru_utime + usage.ru_stime,
               "peak_kb": usage.ru_maxrss}, report)
"""


def validate(fabric: Path) -> Run:
    """`netgen validate --json FABRIC` in a subprocess, with its own resource usage (wait4, taken
    by a small intermediate process: see _MEASURE)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".json") as measured:
        subprocess.run([sys.executable, "-I", "-S", "-c", _MEASURE, measured.name, *NETGEN, "validate", "--json",
                        str(fabric)], stdout=out, stderr=err, env=ENV, check=True)
        seconds = time.perf_counter() - start
        usage = json.loads(Path(measured.name).read_text())
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    return Run(usage["exit"], seconds, usage["cpu_s"], usage["peak_kb"] / 1024, stdout, stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("cases", nargs="*", metavar="CASE", help=f"some of {', '.join(CASES)} (default: all)")
    args = parser.parse_args()
    unknown = sorted(set(args.cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}: choose from {', '.join(CASES)}")
    limits = loader_limits()
    print(f"limits: {limits.file_bytes:,} bytes, {limits.nodes:,} nodes, {limits.text:,} characters,"
          f" {limits.list_items:,} items per list,"
          f" {limits.mapping_keys:,} keys per mapping, {limits.depth} levels", flush=True)
    with tempfile.TemporaryDirectory(prefix="netgen-caps-") as folder:
        for name in args.cases or CASES:
            text = CASES[name](limits, 0)
            fabric = write_case(Path(folder) / name, text)
            runs = [validate(fabric) for _ in range(args.runs)]
            codes = sorted({r.exit_code for r in runs})
            wall, cpu = statistics.median(r.seconds for r in runs), statistics.median(r.cpu_s for r in runs)
            peak = max(r.peak_mb for r in runs)
            verdict = "met" if wall <= 10 and peak <= 500 else "not met"
            nodes, characters = expanded(text)
            print(f"{name:10} {len(text.encode()) / 1e6:4.1f} MB {nodes:7,} nodes {characters / 1e6:4.1f} M chars"
                  f"  wall {wall:5.2f} s"
                  f"  CPU {cpu:5.2f} s  peak RSS {peak:4.0f} MB  exit {'/'.join(map(str, codes))}"
                  f"  (runs: {', '.join(f'{r.seconds:.2f}' for r in runs)}; goal 10 s, 500 MB: {verdict})", flush=True)


if __name__ == "__main__":
    main()
