"""Input errors: every problem names the file, the place in it, the field, what was given and what
is allowed. The CLI prints them and exits 2; no traceback ever reaches the user for bad input."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Path_ = tuple[str | int, ...]  # a place in a YAML document: keys and list indices


@dataclass(frozen=True, slots=True)
class InputProblem:
    file: str
    path: str = ""  # dotted path of the field, e.g. zones[1].ctsw_count ("" = the whole file)
    message: str = ""
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    given: str | None = None
    allowed: str | None = None

    @property
    def location(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where

    def render(self) -> str:
        text = f"{self.location}: "
        if self.path:
            text += f"{self.path}: "
        text += self.message
        details = []
        if self.given is not None:
            details.append(f"given: {self.given}")
        if self.allowed is not None:
            details.append(f"allowed: {self.allowed}")
        if details:
            text += " (" + "; ".join(details) + ")"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "message": self.message,
            "given": self.given,
            "allowed": self.allowed,
        }


@dataclass
class NetgenInputError(Exception):
    """Raised when a fabric or catalog file cannot be loaded; carries every problem found."""

    problems: list[InputProblem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(p.render() for p in self.problems)


def show_value(value: Any, limit: int = 60) -> str:
    """A short, single-line, escaped rendering of a user value for error messages."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def key_text(part: object) -> str:
    """A user-supplied key as it may be printed: plain keys as they are, anything else escaped, so
    no newline, escape sequence or markup from a file can reach the terminal."""
    text = str(part)
    return text if _PLAIN_KEY.fullmatch(text) else show_value(text)


def dotted(path: Path_) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            text += " (key)"
        else:
            text += f".{key_text(part)}" if text else key_text(part)
    return text
