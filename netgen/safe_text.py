"""Untrusted text made safe to show: a file name, a server's answer or a device's output can hold
terminal escape sequences (which recolour, move the cursor or retitle the window), carriage
returns that overwrite what was printed, newlines that forge a line of netgen's own, or bidi
controls that make a name read as another. `visible` writes each such character as a Python-style
escape, so the text shows what it holds and can never act on the terminal or add a line.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text (bidi
# embeddings, overrides and isolates; zero-width joiners and marks; the BOM).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
# The same, less newline and tab: what a console keeps of the text netgen itself lays out.
_UNSAFE_IN_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, limit: int | None = None) -> str:
    """`text` on one line with every control or reordering character escaped; cut to `limit`
    characters (then ending in '...') when a limit is given."""
    shown = _UNSAFE.sub(_escaped, text)
    if limit is not None and len(shown) > limit:
        return shown[:limit] + "..."
    return shown


def without_controls(text: str) -> str:
    """`text` with its line breaks and tabs kept and every other control or reordering character
    escaped: the last guard of a console that prints netgen's own multi-line layout."""
    return _UNSAFE_IN_LAYOUT.sub(_escaped, text)


def printable(text: str, limit: int | None = None) -> str:
    """TEXT safe to show on a terminal: every control or format character (escape sequences,
    bidirectional overrides, line breaks) a space, runs of spaces one, cut at LIMIT characters."""
    flat = "".join(ch if ch.isprintable() else " " for ch in text)
    flat = re.sub(r" {2,}", " ", flat).strip()
    if limit is not None and len(flat) > limit:
        flat = flat[:limit].rstrip() + " ..."
    return flat


__all__ = ["printable", "visible", "without_controls"]
