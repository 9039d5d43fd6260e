"""What changed in the intent: the files the fabric loads (the fabric file, the catalog it names and
netgen's built-in catalog), compared at both revisions as data, each change with its YAML path,
old and new value, file and line; and which other files of the repository changed (code,
templates), by name.

A revision's files are not trusted: each is read with the bounded YAML reader (yaml_source.py,
which refuses alias bombs, huge files and control characters), a catalog the fabric names outside
the revision's tree is not read (its text would end up in a pull-request comment), and values are
kept as data here, escaped where they are laid out (format.py). A value under a key that names a
secret, or that looks like one, is masked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen.diff.config_db import SECRET_FIELD
from netgen.intent.custom import looks_like_secret
from netgen.intent.errors import NetgenInputError, Path_, dotted
from netgen.intent.yaml_source import Marks, nearest_mark, read_yaml

BUILTIN_CATALOG = "netgen/intent/builtin_catalog.yaml"  # in each revision's tree: part of what it loads
MAX_VALUE = 80  # characters of a value shown (the JSON form has it whole, up to MAX_STORED)
MAX_STORED = 2000
MAX_OTHERS = 200  # names of other changed files kept


@dataclass(frozen=True, slots=True)
class IntentChange:
    file: str  # as the repository names it
    path: str  # the YAML path, `zones[1].cable_length_m.rtsw_ctsw_m`
    kind: str  # add | remove | change
    old: str | None  # the value as text (JSON for a mapping or list), None when added
    new: str | None
    line: int | None  # in the head's file (the base's for what is removed)
    paths: int = 1  # paths this change stands for: a field of a YAML anchor reaches every alias

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "path": self.path, "kind": self.kind, "old": self.old, "new": self.new,
                "line": self.line, "paths": self.paths}


@dataclass
class IntentDiff:
    changes: list[IntentChange] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # the fabric's files compared
    problems: list[str] = field(default_factory=list)  # what could not be read, and why
    others: list[str] = field(default_factory=list)  # other files the revisions differ in (first MAX_OTHERS)
    other_count: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"files": self.files, "changes": [c.as_dict() for c in self.changes], "problems": self.problems,
                "other_files": self.others, "other_file_count": self.other_count}


# --- reading ----------------------------------------------------------------------------------
def _read(root: Path, relative: str, side: str, problems: list[str]) -> tuple[Any, Marks] | None:
    """The YAML file `relative` of a revision's tree, None when it is absent, outside the tree (a
    symlink or a `..` leading out) or unreadable (then `problems` says why)."""
    where = Path(os.path.realpath(root / relative))
    if not where.exists():
        return None
    if not where.is_relative_to(Path(os.path.realpath(root))):
        problems.append(f"{relative} at the {side}: outside the revision's tree, not read")
        return None
    try:
        return read_yaml(where, relative)
    except NetgenInputError as exc:
        problems.append(f"{relative} at the {side}: {exc.problems[0].message if exc.problems else exc}")
        return None


def _fabric_file(root: Path, fabric: str) -> str:
    for name in ("fabric.yaml", "fabric.yml"):
        if (root / fabric).is_dir() and (root / fabric / name).is_file():
            return os.path.normpath(os.path.join(fabric, name))
    return os.path.normpath(fabric)


def _catalog_of(data: Any, fabric_file: str) -> str | None:
    named = data.get("catalog") if isinstance(data, dict) else None
    if not isinstance(named, str) or not named or os.path.isabs(named):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(fabric_file), named))


# --- comparing --------------------------------------------------------------------------------
def _identity(item: Any) -> Any:
    """What names a list item across revisions: a zone's id, a block's or a class's name."""
    if isinstance(item, dict):
        for key in ("id", "name"):
            value = item.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                return (key, value)
    return None


def _pairs(old: list[Any], new: list[Any]) -> list[tuple[int | None, int | None]]:
    """Items matched by identity when every item has a distinct one (zones by id), else by place."""
    ids_old, ids_new = [_identity(x) for x in old], [_identity(x) for x in new]
    named = all(ids_old + ids_new) and len(set(ids_old)) == len(old) and len(set(ids_new)) == len(new)
    if not named:
        length = max(len(old), len(new))
        return [(i if i < len(old) else None, i if i < len(new) else None) for i in range(length)]
    where_new = {identity: index for index, identity in enumerate(ids_new)}
    pairs: list[tuple[int | None, int | None]] = [(i, where_new.get(identity)) for i, identity in enumerate(ids_old)]
    kept = set(ids_old)
    pairs += [(None, j) for j, identity in enumerate(ids_new) if identity not in kept]
    return pairs


Found = list[tuple[str, Path_, Path_, Any, Any]]  # kind, path at the base, path at the head, old, new


def _walk(old: Any, new: Any, at_old: Path_, at_new: Path_, out: Found) -> None:
    if old == new and type(old) is type(new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            if key not in new:
                out.append(("remove", (*at_old, key), (*at_new, key), old[key], None))
            elif key not in old:
                out.append(("add", (*at_old, key), (*at_new, key), None, new[key]))
            else:
                _walk(old[key], new[key], (*at_old, key), (*at_new, key), out)
    elif isinstance(old, list) and isinstance(new, list):
        for i, j in _pairs(old, new):
            if j is None and i is not None:
                out.append(("remove", (*at_old, i), (*at_new, i), old[i], None))
            elif i is None and j is not None:
                out.append(("add", (*at_old, j), (*at_new, j), None, new[j]))
            elif i is not None and j is not None:
                _walk(old[i], new[j], (*at_old, i), (*at_new, j), out)
    else:
        out.append(("change", at_old, at_new, old, new))


def _masked(value: Any) -> Any:
    """`value` with what a key names as a secret, or what looks like one, as ***."""
    if isinstance(value, dict):
        return {k: "***" if isinstance(k, str) and SECRET_FIELD.search(k) else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return "***" if isinstance(value, str) and looks_like_secret(value) else value


def _text(value: Any, path: Path_) -> str | None:
    if value is None:
        return None
    if any(isinstance(part, str) and SECRET_FIELD.search(part) for part in path):
        return "***"
    value = _masked(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_STORED else text[:MAX_STORED] + "…"


def compare_documents(file: str, old: tuple[Any, Marks] | None, new: tuple[Any, Marks] | None) -> list[IntentChange]:
    """The changes between two revisions of one YAML file (None: absent at that revision), rows
    that stand for the same line and values (a YAML anchor's field, in every alias) merged."""
    if old is None and new is None:
        return []
    if old is None or new is None:
        return [IntentChange(file, "(the whole file)", "add" if old is None else "remove",
                             None if old is None else "(present)", None if new is None else "(present)", 1)]
    found: Found = []
    _walk(old[0], new[0], (), (), found)
    rows: dict[tuple[object, ...], tuple[list[Path_], IntentChange]] = {}
    for kind, at_old, at_new, was, now in found:
        path, marks = (at_old, old[1]) if kind == "remove" else (at_new, new[1])
        line: int | None = nearest_mark(path, marks)[0]
        change = IntentChange(file, dotted(path) or "(top level)", kind, _text(was, at_old), _text(now, at_new), line)
        merge = (kind, line, change.old, change.new)
        if merge in rows:
            rows[merge][0].append(at_new)
        else:
            rows[merge] = ([at_new], change)
    return [change if len(paths) == 1 else
            IntentChange(change.file, _paths_text(paths), change.kind, change.old, change.new, change.line, len(paths))
            for paths, change in rows.values()]


_INDEX = re.compile(r"\[(\d+)\]")


def _paths_text(paths: list[Path_]) -> str:
    """`zones[1..7].racks` for paths that differ in one list index, else the first and a count."""
    texts = [dotted(path) for path in paths]
    shapes = {_INDEX.sub("[]", text) for text in texts}
    if len(shapes) == 1 and all(len(_INDEX.findall(t)) == 1 for t in texts):
        numbers = sorted(int(_INDEX.search(t).group(1)) for t in texts)  # type: ignore[union-attr]
        if numbers == list(range(numbers[0], numbers[-1] + 1)):
            return shapes.pop().replace("[]", f"[{numbers[0]}..{numbers[-1]}]")
    return f"{texts[0]} (and {len(texts) - 1} more)"


def _other_files(repo: Path, base: str, head: str | None, compared: set[str]) -> list[str]:
    args = ["git", "-C", str(repo), "diff", "--name-only", "-z", "--no-renames", base, *([head] if head else []), "--"]
    done = subprocess.run(args, capture_output=True, check=False)
    if done.returncode != 0:
        return []
    names = [name.decode("utf-8", "replace") for name in done.stdout.split(b"\0") if name]
    return [name for name in names if name not in compared]


def intent_changes(repo: Path, base_root: Path, head_root: Path, fabric: str, base: str,
                   head: str | None) -> IntentDiff:
    """The fabric's files compared at `base` (its tree in `base_root`) and `head` (`head_root`; the
    working tree when `head` is None), and the other files git says differ (`base`, `head`: commits)."""
    result = IntentDiff()
    fabric_file = _fabric_file(head_root, fabric)
    roots = {"base": base_root, "head": head_root}
    fabrics = {side: _read(root, fabric_file, side, result.problems) for side, root in roots.items()}
    catalogs = {name for doc in fabrics.values() if doc and (name := _catalog_of(doc[0], fabric_file))}
    for file in [fabric_file, *sorted(catalogs), BUILTIN_CATALOG]:
        old, new = (fabrics[side] if file == fabric_file else _read(root, file, side, result.problems)
                    for side, root in roots.items())
        if old is not None or new is not None:
            result.files.append(file)
            result.changes += compare_documents(file, old, new)
    others = _other_files(repo, base, head, set(result.files))
    result.others, result.other_count = others[:MAX_OTHERS], len(others)
    return result
