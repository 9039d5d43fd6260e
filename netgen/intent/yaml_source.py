"""Read YAML safely and remember where every node came from.

PyYAML's safe loader builds the data; alongside it we keep the line/column of every node so that
a problem at `zones[1].ctsw_count` can be reported as `fabric.yaml:23:17`. Everything a hostile or
broken file can do (control characters, bad tags, duplicate keys, alias bombs, endless files) ends
as a NetgenInputError, never as an exception.

What a file may cost is bounded while it is composed, before anything is built from it (the
MAX_* limits below): the bytes read, the items of a list, the keys of a mapping, the nesting depth,
and the nodes and characters of the document with every alias expanded (an alias costs nothing to
write but everything after the loader, the data, the marks, pydantic's JSON, meets what it repeats).
The composer counts as it goes and stops at the first node over a limit, naming its line and
column, so no part of a file beyond the limits is ever built, and nothing after the loader sees
more than they allow. Events come from libyaml where PyYAML has it (its wheels do): the scanner is
what costs most in pure Python.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import yaml
from yaml.events import (
    AliasEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from netgen.intent.custom import looks_like_secret
from netgen.intent.errors import InputProblem, NetgenInputError, Path_, dotted, show_value

Marks = dict[Path_, tuple[int, int]]

# Input limits (docs/reference/input-limits.md), counted while a file is composed. The biggest real inputs
# are far below them: meta-24k's fabric file has 332 nodes, the built-in catalog 2,225; files with
# an entry per switch (deploy.yaml, deploy.sot.yaml) of four times meta-24k (6,684 switches) about
# 54,000 nodes, a list of every switch 6,684 items; nesting stays under 10 levels.
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_NODES = 250_000  # scalars, lists and mappings, each counted at every place an alias puts it
MAX_TEXT = MAX_FILE_BYTES  # characters of every scalar (keys too), each counted at every place an alias puts it
MAX_LIST_ITEMS = 50_000
MAX_MAPPING_KEYS = 50_000
MAX_DEPTH = 64  # levels of nesting, the document's top level being 1
_TAG_MERGE = "tag:yaml.org,2002:merge"
_LIMITS_HINT = "netgen's input limits (docs: \"Input limits\")"


class _BoundedComposer:
    """PyYAML's Composer (yaml/composer.py), counting as it composes: the nodes and characters of
    the document with aliases expanded, the items of each list, the keys of each mapping and the
    depth; it also refuses duplicate keys and an alias inside its own anchor, which PyYAML would
    turn into a cycle. Every refusal is a NetgenInputError that names the file, the line and column,
    and the limit."""

    if TYPE_CHECKING:  # given by the parser and resolver classes it is mixed with
        def check_event(self, *choices: type[Event]) -> bool: ...
        def peek_event(self) -> Any: ...
        def get_event(self) -> Any: ...
        def resolve(self, kind: type[Node], value: str | None, implicit: Any) -> str: ...

    def __init__(self, display: str) -> None:
        self.display = display
        self.anchors: dict[str, Node] = {}
        self._nodes = 0  # composed so far, an alias counted as the nodes it stands for
        self._text = 0  # characters of the scalars composed so far, counted likewise
        self._depth = 0  # of the node being composed
        self._reach = 0  # the deepest level reached inside the node being composed
        self._path: list[str | int] = []
        # anchored nodes: (nodes, characters, height) once composed; an alias to one still open is recursive
        self._anchored: dict[int, tuple[int, int, int]] = {}

    def get_single_node(self) -> Node | None:
        self.get_event()  # StreamStartEvent
        document = None
        if not self.check_event(StreamEndEvent):
            self.get_event()  # DocumentStartEvent
            document = self._compose_node()
            self.get_event()  # DocumentEndEvent
        if not self.check_event(StreamEndEvent):
            event = self.get_event()
            raise yaml.composer.ComposerError("expected a single document in the stream",
                                              document.start_mark if document else None,
                                              "but found another document", event.start_mark)
        self.get_event()  # StreamEndEvent
        self.anchors = {}
        return document

    def _refuse(self, at: Event | Node, message: str, allowed: str) -> NetgenInputError:
        mark = at.start_mark
        return NetgenInputError([InputProblem(self.display, dotted(tuple(self._path)), message,
                                              mark.line + 1 if mark else None, mark.column + 1 if mark else None,
                                              allowed=allowed)])

    def _count(self, event: Event, nodes: int, text: int) -> None:
        self._nodes += nodes
        self._text += text
        if self._nodes > MAX_NODES:
            raise self._refuse(event, f"the document holds more than {MAX_NODES:,} nodes (lists, mappings"
                               " and scalars, each alias counted as what it repeats)",
                               f"at most {MAX_NODES:,} nodes: {_LIMITS_HINT}")
        if self._text > MAX_TEXT:
            raise self._refuse(event, f"the document's keys and values hold more than {MAX_TEXT:,} characters"
                               " (each alias counted as what it repeats)",
                               f"at most {MAX_TEXT:,} characters: {_LIMITS_HINT}")

    def _compose_node(self) -> Node:
        depth = self._depth + 1
        if self.check_event(AliasEvent):
            event = self.get_event()
            target = self.anchors.get(event.anchor)
            if target is None:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}",
                                                  event.start_mark)
            cost = self._anchored.get(id(target))
            if cost is None:  # still being composed: the alias sits inside its own anchor
                raise self._refuse(target, "recursive YAML alias", "an alias only to a node outside it")
            nodes, text, height = cost
            if depth + height - 1 > MAX_DEPTH:
                raise self._too_deep(event)
            self._count(event, nodes, text)
            self._reach = max(self._reach, depth + height - 1)
            return target
        event = self.peek_event()
        if depth > MAX_DEPTH:
            raise self._too_deep(event)
        own_text = len(event.value) if isinstance(event, ScalarEvent) else 0
        self._count(event, 1, own_text)
        anchor = event.anchor if isinstance(event, NodeEvent) else None
        if anchor is not None and anchor in self.anchors:
            raise yaml.composer.ComposerError(f"found duplicate anchor {anchor!r}; first occurrence",
                                              self.anchors[anchor].start_mark, "second occurrence",
                                              event.start_mark)
        nodes_before, text_before = self._nodes - 1, self._text - own_text
        outer_depth, outer_reach = self._depth, self._reach
        self._depth = self._reach = depth
        if isinstance(event, ScalarEvent):
            node: Node = self._compose_scalar(anchor)
        elif isinstance(event, SequenceStartEvent):
            node = self._compose_sequence(anchor)
        elif isinstance(event, MappingStartEvent):
            node = self._compose_mapping(anchor)
        else:  # the parser yields only these here; anything else is a malformed stream
            raise yaml.composer.ComposerError(None, None, f"unexpected {type(event).__name__}", event.start_mark)
        if anchor is not None:
            self._anchored[id(node)] = (self._nodes - nodes_before, self._text - text_before, self._reach - depth + 1)
        self._depth, self._reach = outer_depth, max(outer_reach, self._reach)
        return node

    def _too_deep(self, event: Event) -> NetgenInputError:
        return self._refuse(event, f"nested more than {MAX_DEPTH} levels deep",
                            f"at most {MAX_DEPTH} levels: {_LIMITS_HINT}")

    def _compose_scalar(self, anchor: str | None) -> ScalarNode:
        event = self.get_event()
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(ScalarNode, event.value, event.implicit)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        if anchor is not None:
            self.anchors[anchor] = node
        return node

    def _compose_sequence(self, anchor: str | None) -> SequenceNode:
        start = self.get_event()
        tag = start.tag
        if tag is None or tag == "!":
            tag = self.resolve(SequenceNode, None, start.implicit)
        node = SequenceNode(tag, [], start.start_mark, None, flow_style=start.flow_style)
        if anchor is not None:
            self.anchors[anchor] = node
        items = node.value
        path = self._path
        while not self.check_event(SequenceEndEvent):
            if len(items) == MAX_LIST_ITEMS:
                raise self._refuse(self.peek_event(), f"a list of more than {MAX_LIST_ITEMS:,} items",
                                   f"at most {MAX_LIST_ITEMS:,} items in one list: {_LIMITS_HINT}")
            path.append(len(items))
            items.append(self._compose_node())
            path.pop()
        node.end_mark = self.get_event().end_mark
        return node

    def _compose_mapping(self, anchor: str | None) -> MappingNode:
        start = self.get_event()
        tag = start.tag
        if tag is None or tag == "!":
            tag = self.resolve(MappingNode, None, start.implicit)
        node = MappingNode(tag, [], start.start_mark, None, flow_style=start.flow_style)
        if anchor is not None:
            self.anchors[anchor] = node
        pairs = node.value
        path = self._path
        seen: dict[str, Node] = {}
        while not self.check_event(MappingEndEvent):
            if len(pairs) == MAX_MAPPING_KEYS:
                raise self._refuse(self.peek_event(), f"a mapping of more than {MAX_MAPPING_KEYS:,} keys",
                                   f"at most {MAX_MAPPING_KEYS:,} keys in one mapping: {_LIMITS_HINT}")
            key_event = self.peek_event()
            key = self._compose_node()
            scalar = isinstance(key, ScalarNode)
            if scalar:
                path.append(str(key.value))
                if key.tag != _TAG_MERGE:
                    first = seen.get(key.value)
                    if first is not None:
                        raise self._refuse(key_event, f"duplicate key {show_value(key.value)} (first defined on"
                                           f" line {first.start_mark.line + 1})", "each key once per mapping")
                    seen[key.value] = key
            pairs.append((key, self._compose_node()))
            if scalar:
                path.pop()
        node.end_mark = self.get_event().end_mark
        return node


if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class _Loader(_BoundedComposer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """libyaml's parser, the bounded composer, PyYAML's safe constructor."""

        def __init__(self, raw: bytes, text: str, display: str) -> None:
            CParser.__init__(self, raw)
            _BoundedComposer.__init__(self, display)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
else:  # pragma: no cover - PyYAML built without libyaml: the same checks, in pure Python
    class _Loader(_BoundedComposer, yaml.reader.Reader, yaml.scanner.Scanner,  # type: ignore[no-redef,misc]
                  yaml.parser.Parser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        def __init__(self, raw: bytes, text: str, display: str) -> None:
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            _BoundedComposer.__init__(self, display)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)


def read_yaml(path: Path, display: str) -> tuple[Any, Marks]:
    """Parse one YAML file; return (data, marks) or raise NetgenInputError naming line and column."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise fail(display, "not a regular file (a device, pipe or socket)")
        with path.open("rb") as handle:  # bounded: st_size says nothing for special files
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise fail(display, "file not found") from None
    except IsADirectoryError:
        raise fail(display, "is a directory, expected a YAML file") from None
    except PermissionError:
        raise fail(display, "permission denied") from None
    except OSError as exc:
        raise fail(display, f"cannot read file: {exc.strerror}") from None
    return parse_yaml(raw, display)


def read_yaml_stream(stream: BinaryIO, display: str) -> tuple[Any, Marks]:
    """parse_yaml of what a stream (standard input) holds, read with the same bound as a file."""
    try:
        raw = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise fail(display, f"cannot read: {exc.strerror}") from None
    return parse_yaml(raw, display)


def parse_yaml(raw: bytes, display: str) -> tuple[Any, Marks]:
    """The YAML document in `raw` (read from `display`): (data, marks) or NetgenInputError."""
    if len(raw) > MAX_FILE_BYTES:
        raise NetgenInputError([InputProblem(
            display, "", f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB",
            allowed=f"at most {MAX_FILE_BYTES:,} bytes: {_LIMITS_HINT}")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(display, f"not UTF-8 text (byte {exc.start})") from None
    unprintable = _NON_PRINTABLE.search(text)
    if unprintable is not None:
        raise _unprintable(display, text, unprintable.start())
    loader = _Loader(raw, text, display)
    node: yaml.Node | None = None
    try:
        node = loader.get_single_node()
        if node is None:
            raise fail(display, "file is empty; expected a mapping of settings")
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
    except yaml.reader.ReaderError:  # caught above, before parsing; libyaml's offsets are in bytes
        raise fail(display, "not readable as YAML text") from None
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
                value = ("a value that looks like a secret (not shown)" if looks_like_secret(node.value)
                         else f"value {show_value(node.value)}")
                return NetgenInputError([InputProblem(
                    display, "", f"{value} cannot be read as {tag}",
                    mark.line + 1, mark.column + 1, allowed=f"a valid {tag} value, or drop the tag")])
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return fail(display, "a tagged YAML value cannot be read")


# What YAML 1.1 allows in a stream (PyYAML's Reader.NON_PRINTABLE, libyaml's reader): the file is
# searched once, whole, so that the character is located in characters, not libyaml's bytes.
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


def _unprintable(display: str, text: str, position: int) -> NetgenInputError:
    """YAML forbids raw control characters (NUL, BEL, ESC, ...) anywhere in a stream."""
    before = text[:position]
    line = before.count("\n") + 1
    column = position - (before.rfind("\n") + 1) + 1
    code = ord(text[position])
    return NetgenInputError([InputProblem(
        display, "", f"character U+{code:04X} is not allowed in a YAML file", line, column,
        allowed="printable characters only (no control character can reach a device config)",
    )])


def fail(display: str, message: str) -> NetgenInputError:
    return NetgenInputError([InputProblem(file=display, message=message)])


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
