"""Read YAML safely and remember where every node came from.

PyYAML's safe loader builds the data; alongside it we keep the line/column of every node so that
a problem at `zones[1].ctsw_count` can be reported as `fabric.yaml:23:17`. Everything a hostile or
broken file can do (control characters, bad tags, duplicate keys, alias bombs, endless files) ends
as a NetgenInputError, never as an exception.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from netgen.intent.errors import InputProblem, NetgenInputError, Path_, dotted, show_value

Marks = dict[Path_, tuple[int, int]]

MAX_YAML_NODES = 2_000_000  # guards against alias bombs; meta-24k needs a few hundred
MAX_FILE_BYTES = 16 * 1024 * 1024


def read_yaml(path: Path, display: str) -> tuple[Any, Marks]:
    """Parse one YAML file; return (data, marks) or raise NetgenInputError naming line and column."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise fail(display, "not a regular file (a device, pipe or socket)")
        with path.open("rb") as handle:  # bounded: st_size says nothing for special files
            raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise fail(display, f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise fail(display, "file not found") from None
    except IsADirectoryError:
        raise fail(display, "is a directory, expected a YAML file") from None
    except PermissionError:
        raise fail(display, "permission denied") from None
    except UnicodeDecodeError as exc:
        raise fail(display, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise fail(display, f"cannot read file: {exc.strerror}") from None
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _unprintable(display, text, exc) from None
    node: yaml.Node | None = None
    try:
        node = loader.get_single_node()
        if node is None:
            raise fail(display, "file is empty; expected a mapping of settings")
        _check_nodes(node, display)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise NetgenInputError(
            [
                InputProblem(
                    file=display,
                    message=f"YAML syntax error: {message}",
                    line=mark.line + 1 if mark else None,
                    column=mark.column + 1 if mark else None,
                )
            ]
        ) from None
    except yaml.reader.ReaderError as exc:
        raise _unprintable(display, text, exc) from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError):
        # PyYAML raises plain Python errors for tagged scalars it cannot build (`!!int x`).
        raise _bad_tagged_scalar(display, node) from None
    except yaml.YAMLError as exc:
        raise fail(display, f"YAML error: {exc}") from None
    except RecursionError:
        raise fail(display, "YAML nesting is too deep") from None
    finally:
        loader.dispose()
    marks: Marks = {}
    _collect_marks(node, (), marks)
    return data, marks


def _bad_tagged_scalar(display: str, root: yaml.Node | None) -> NetgenInputError:
    """Find the scalar whose tag PyYAML could not apply and report where it is."""
    builder = yaml.SafeLoader("")
    stack, seen = ([root] if root is not None else []), set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            try:
                builder.construct_object(node)
            except Exception:
                mark = node.start_mark
                tag = node.tag.replace("tag:yaml.org,2002:", "!!")
                return NetgenInputError([InputProblem(
                    display, "", f"value {show_value(node.value)} cannot be read as {tag}",
                    mark.line + 1, mark.column + 1, allowed=f"a valid {tag} value, or drop the tag")])
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return fail(display, "a tagged YAML value cannot be read")


def _unprintable(display: str, text: str, exc: yaml.reader.ReaderError) -> NetgenInputError:
    """YAML forbids raw control characters (NUL, BEL, ESC, ...) anywhere in a stream."""
    before = text[: exc.position]
    line = before.count("\n") + 1
    column = exc.position - (before.rfind("\n") + 1) + 1
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
    return NetgenInputError([InputProblem(
        display, "", f"character U+{code:04X} is not allowed in a YAML file", line, column,
        allowed="printable characters only (no control character can reach a device config)",
    )])


def fail(display: str, message: str) -> NetgenInputError:
    return NetgenInputError([InputProblem(file=display, message=message)])


def _check_nodes(root: yaml.Node, display: str) -> None:
    """Reject duplicate keys, recursive aliases and alias bombs before constructing anything."""
    visits = 0
    stack: list[tuple[yaml.Node, frozenset[int], Path_]] = [(root, frozenset(), ())]
    while stack:
        node, ancestors, path = stack.pop()
        visits += 1
        if visits > MAX_YAML_NODES:
            raise fail(display, "document expands to too many nodes (alias bomb?)")
        if id(node) in ancestors:
            mark = node.start_mark
            raise NetgenInputError(
                [InputProblem(display, dotted(path), "recursive YAML alias", mark.line + 1, mark.column + 1)]
            )
        inner = ancestors | {id(node)}
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, yaml.Node] = {}
            for key, value in node.value:
                child = (*path, str(key.value)) if isinstance(key, yaml.ScalarNode) else path
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in seen:
                        first = seen[key.value].start_mark.line + 1
                        raise NetgenInputError([InputProblem(
                            display, dotted(child),
                            f"duplicate key {show_value(key.value)} (first defined on line {first})",
                            key.start_mark.line + 1, key.start_mark.column + 1,
                            allowed="each key once per mapping",
                        )])
                    seen[key.value] = key
                stack.append((key, inner, path))
                stack.append((value, inner, child))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, inner, (*path, index)) for index, item in enumerate(node.value))


def _collect_marks(node: yaml.Node, path: Path_, marks: Marks) -> None:
    # construct_document already flattened merge keys (<<) in place, so merged fields carry the
    # marks of the anchor they came from: errors point at the line that actually holds the value.
    marks.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                child = (*path, key.value)
                marks[child] = (key.start_mark.line + 1, key.start_mark.column + 1)
                _collect_marks(value, child, marks)
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            _collect_marks(value, (*path, index), marks)




def nearest_mark(path: Path_, marks: Marks) -> tuple[int | None, int | None]:
    """The position of `path`, or of its closest ancestor that is in the file (missing fields)."""
    for end in range(len(path), -1, -1):
        mark = marks.get(path[:end])
        if mark is not None:
            return mark
    return None, None
