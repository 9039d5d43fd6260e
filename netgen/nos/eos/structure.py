"""Structural check of an EOS running-config as netgen renders it.

EOS prints its running-config with 3 spaces per mode level, `!` between blocks and `end` last.
A rendered file must keep that shape exactly, because `configure replace` and config sessions parse
it mode by mode: a line indented under the wrong parent lands in the wrong mode (or fails).
"""

from __future__ import annotations

import re

INDENT = 3
CONTROL = re.compile(r"[\x00-\x1f]")  # a tab or another control character (lines hold no newline)
_CONTROL_BYTES = bytes(c for c in range(32) if c != ord("\n"))  # CONTROL, less the newlines between lines


def check_eos_config(text: str) -> list[str]:
    """Problems with the file's shape (empty list = well formed)."""
    return [] if _plainly_well_formed(text) else _line_by_line(text)


def _plainly_well_formed(text: str) -> bool:
    """True only where _line_by_line finds nothing, decided with whole-text searches in C and one
    light pass over the indents (faster on meta-24k's 2,000-line switches: docs/developer/benchmarks.md);
    a banner, text beyond ASCII or any doubt is left to _line_by_line, which also words the problems."""
    if not text.isascii() or not text.endswith("end\n") or text.startswith("\n"):
        return False  # beyond ASCII, str.strip and str.isspace know more whitespace than these searches
    data = text.encode("ascii")
    if len(data.translate(None, _CONTROL_BYTES)) != len(data):
        return False
    if "\n\n" in text or " \n" in text or "banner " in text:
        return False
    body = text[:-1].split("\n")
    if body[-1] != "end":
        return False
    previous = 0
    top_level: set[str] = set()
    for line in body:
        indent = len(line) - len(line.lstrip(" "))
        if indent % INDENT or indent > previous + INDENT:
            return False
        previous = indent
        if indent == 0:
            stripped = line.strip()
            if stripped != "!":
                if stripped in top_level:
                    return False
                top_level.add(stripped)
    return True


def _line_by_line(text: str) -> list[str]:
    problems: list[str] = []
    lines = text.split("\n")
    if not text.endswith("end\n"):
        problems.append("the file must end with 'end' and a newline")
    body = lines[:-1] if lines and lines[-1] == "" else lines
    top_level: dict[str, int] = {}
    previous_indent = 0
    in_banner = 0  # the line number of an open `banner login|motd`: its text is free-form up to `EOF`
    for number, line in enumerate(body, start=1):
        where = f"line {number}"
        if in_banner:
            if CONTROL.search(line):
                problems.append(f"{where}: tab or control character in the banner")
            in_banner = 0 if line == "EOF" else in_banner
            continue
        if line in ("banner login", "banner motd"):
            in_banner = number
        if line == "":
            problems.append(f"{where}: empty line (EOS separates blocks with '!')")
            continue
        problems += _line_shape(where, line, previous_indent)
        indent = len(line) - len(line.lstrip(" "))
        stripped = line.strip()
        if indent == 0 and stripped != "!":  # the `!` between blocks may repeat
            if stripped in top_level:
                problems.append(f"{where}: duplicate top-level line '{stripped}' (first on line {top_level[stripped]})")
            top_level.setdefault(stripped, number)
        previous_indent = indent
    if in_banner:
        problems.append(f"line {in_banner}: banner without its closing 'EOF' line")
    if "end" in top_level and top_level["end"] != len(body):
        problems.append(f"line {top_level['end']}: 'end' before the end of the file")
    return problems


def _line_shape(where: str, line: str, previous_indent: int) -> list[str]:
    """A non-empty line's own problems: its characters, and its indent against the line before (a
    mode may open only one level deeper)."""
    problems: list[str] = []
    if CONTROL.search(line):
        problems.append(f"{where}: tab or control character")
    if line != line.rstrip():
        problems.append(f"{where}: trailing whitespace")
    indent = len(line) - len(line.lstrip(" "))
    if indent % INDENT:
        problems.append(f"{where}: indentation {indent} is not a multiple of {INDENT}")
    elif indent > previous_indent + INDENT:
        problems.append(f"{where}: indented {indent - previous_indent} deeper than its parent line")
    return problems
