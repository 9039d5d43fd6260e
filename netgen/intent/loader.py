"""Load a fabric file (and its catalogs) into validated models, or raise NetgenInputError.

YAML is parsed with PyYAML's safe loader; alongside the data we keep the line/column of every
node so that a pydantic error at `zones.1.ctsw_count` can be reported as `fabric.yaml:23:17`.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from dataclasses import dataclass
from importlib import resources
from ipaddress import ip_network
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from netgen.intent.catalog import Catalog, PlatformModel
from netgen.intent.errors import InputProblem, NetgenInputError, show_value
from netgen.intent.fabric import Fabric
from netgen.intent.types import FILE_PATH_PATTERN, HOSTNAME_PREFIX_PATTERN, NAME_PATTERN, TEXT_PATTERN

Path_ = tuple[str | int, ...]
Marks = dict[Path_, tuple[int, int]]

FABRIC_FILE_NAMES = ("fabric.yaml", "fabric.yml")
MAX_YAML_NODES = 2_000_000  # guards against alias bombs; meta-24k needs a few hundred
MAX_FILE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class LoadedFabric:
    """A validated fabric with the catalog it was validated against."""

    fabric: Fabric
    catalog: Catalog
    source: Path


# --- YAML with marks ------------------------------------------------------------------------------
def read_yaml(path: Path, display: str) -> tuple[Any, Marks]:
    """Parse one YAML file; return (data, marks) or raise NetgenInputError naming line and column."""
    try:
        if path.exists() and not path.is_dir() and not path.is_file():
            raise _fail(display, "not a regular file (a device, pipe or socket)")
        with path.open("rb") as handle:  # bounded: st_size says nothing for special files
            raw = handle.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise _fail(display, f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise _fail(display, "file not found") from None
    except IsADirectoryError:
        raise _fail(display, "is a directory, expected a YAML file") from None
    except PermissionError:
        raise _fail(display, "permission denied") from None
    except UnicodeDecodeError as exc:
        raise _fail(display, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise _fail(display, f"cannot read file: {exc.strerror}") from None
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _unprintable(display, text, exc) from None
    node: yaml.Node | None = None
    try:
        node = loader.get_single_node()
        if node is None:
            raise _fail(display, "file is empty; expected a mapping of settings")
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
        raise _fail(display, f"YAML error: {exc}") from None
    except RecursionError:
        raise _fail(display, "YAML nesting is too deep") from None
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
    return _fail(display, "a tagged YAML value cannot be read")


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


def _fail(display: str, message: str) -> NetgenInputError:
    return NetgenInputError([InputProblem(file=display, message=message)])


def _check_nodes(root: yaml.Node, display: str) -> None:
    """Reject duplicate keys, recursive aliases and alias bombs before constructing anything."""
    visits = 0
    stack: list[tuple[yaml.Node, frozenset[int]]] = [(root, frozenset())]
    while stack:
        node, ancestors = stack.pop()
        visits += 1
        if visits > MAX_YAML_NODES:
            raise _fail(display, "document expands to too many nodes (alias bomb?)")
        if id(node) in ancestors:
            mark = node.start_mark
            raise NetgenInputError(
                [InputProblem(display, "", "recursive YAML alias", mark.line + 1, mark.column + 1)]
            )
        inner = ancestors | {id(node)}
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, yaml.Node] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if key.value in seen:
                        first = seen[key.value].start_mark.line + 1
                        raise NetgenInputError(
                            [
                                InputProblem(
                                    display,
                                    "",
                                    f"duplicate key '{key.value}' (first defined on line {first})",
                                    key.start_mark.line + 1,
                                    key.start_mark.column + 1,
                                    allowed="each key once per mapping",
                                )
                            ]
                        )
                    seen[key.value] = key
                stack.append((key, inner))
                stack.append((value, inner))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, inner) for child in node.value)


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


# --- validation -----------------------------------------------------------------------------------
_JSON_SCALARS = (str, int, float, bool, type(None))
M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any, marks: Marks, display: str, prefix: Path_ = ()) -> M:
    """Validate YAML data in pydantic's strict JSON mode.

    YAML already produced native types, so the lax coercions pydantic applies to Python input
    (`true` -> 1 for an int, `3` -> 0.0.0.3/32 for a network, "9100" -> 9100) would only hide
    mistakes. Dates, binary and sets (YAML's other types) are rejected with their location.
    """
    odd = _non_json(data, prefix)
    if odd is not None:
        path, value = odd
        line, column = _nearest_mark(path, marks)
        raise NetgenInputError([InputProblem(
            display, dotted(path), f"unsupported YAML value of type {type(value).__name__}", line, column,
            given=show_value(value), allowed="text, numbers, true/false, lists and mappings; quote dates")])
    try:
        return model.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        raise NetgenInputError(problems_from_validation(exc, data, marks, display, model, prefix)) from None


def _non_json(value: Any, path: Path_) -> tuple[Path_, Any] | None:
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int, bool)) and key is not None:
                return (*path, str(key)), key
            found = _non_json(item, (*path, key if isinstance(key, str) else str(key)))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _non_json(item, (*path, index))
            if found:
                return found
    elif not isinstance(value, _JSON_SCALARS):
        return path, value
    return None


# --- pydantic errors -> input problems ------------------------------------------------------------
_PATTERN_TEXT = {
    NAME_PATTERN: "a name of letters, digits, '_', '.', '-' starting with a letter or digit, <= 63 chars",
    TEXT_PATTERN: "letters, digits, spaces and _ . , : / ( ) + = @ - [ ] only, <= 200 chars"
    " (no newline, control character, quote, '!' or '#')",
    HOSTNAME_PREFIX_PATTERN: "empty, or lower-case letters, digits and '-' ending with '-', e.g. 'snc1-'",
    FILE_PATH_PATTERN: "a file path of letters, digits, '_', '.', '/', '-'",
}
# Far above any real fabric (meta-24k has about 53k links + NICs), low enough that a typo such as
# racks: 40960 fails in a second instead of exhausting memory.
MAX_FABRIC_OBJECTS = 2_000_000


def problems_from_validation(
    exc: ValidationError, data: Any, marks: Marks, display: str, model: type[BaseModel], prefix: Path_ = ()
) -> list[InputProblem]:
    grouped: dict[Path_, list[ErrorDetails]] = {}
    for error in exc.errors():
        path = _data_path(prefix, error["loc"], data)
        grouped.setdefault(path, []).append(error)
    problems = []
    for path, errors in grouped.items():
        problems.append(_problem(path, errors, marks, display, model, len(prefix)))
    return problems


def _data_path(prefix: Path_, loc: tuple[str | int, ...], data: Any) -> Path_:
    """Turn a pydantic loc into a path through the user's data, dropping union/type tags."""
    path: list[str | int] = list(prefix)
    current = data
    for part in loc:
        if isinstance(current, dict):
            path.append(part)
            current = current.get(part) if isinstance(part, str) else None
        elif isinstance(current, list) and isinstance(part, int):
            path.append(part)
            current = current[part] if 0 <= part < len(current) else None
        elif part == "[key]":
            path.append(part)
        # else: a tag such as 'function-after[...]' or 'ipv4-network' inside a union: not a place.
    return tuple(path)


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


def _problem(
    path: Path_, errors: list[ErrorDetails], marks: Marks, display: str, model: type[BaseModel], skip: int
) -> InputProblem:
    first = errors[0]
    kind = first["type"]
    line, column = _nearest_mark(path, marks)
    messages = list(dict.fromkeys(_message(e) for e in errors))
    given: str | None = None if kind == "missing" else show_value(first.get("input"))
    allowed = _allowed(first, path, model, skip)
    if kind == "extra_forbidden":
        key = path[-1] if path and path[-1] != "[key]" else path[-2] if len(path) > 1 else "?"
        messages = [f"unknown key {show_value(str(key))}"]
        given = None
    return InputProblem(
        file=display,
        path=dotted(path),
        message="; ".join(messages),
        line=line,
        column=column,
        given=given,
        allowed=allowed,
    )


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "string_pattern_mismatch":
        return "contains characters or a form that is not allowed"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    return str(error["msg"])


def _nearest_mark(path: Path_, marks: Marks) -> tuple[int | None, int | None]:
    for end in range(len(path), -1, -1):
        mark = marks.get(path[:end])
        if mark is not None:
            return mark
    return None, None


def _allowed(error: ErrorDetails, path: Path_, model: type[BaseModel], skip: int) -> str | None:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        fields = _fields_at(model, path[skip:-1])
        if not fields:
            return None
        close = difflib.get_close_matches(str(path[-1]), fields, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return hint + "known keys: " + ", ".join(fields)
    if kind == "missing":
        return "add this field"
    if kind == "value_error" and "host bits set" in str(error.get("msg", "")):
        try:
            return f"a prefix with no host bits set: {ip_network(str(error.get('input')), strict=False)}"
        except ValueError:
            return None
    if kind == "string_type" and _is_network_field(model, path[skip:]):
        return "a prefix written as text, e.g. 10.0.0.0/16 or fd00::/48"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        return _PATTERN_TEXT.get(pattern, f"text matching {pattern}")
    bounds = {
        "greater_than_equal": ">= {ge}",
        "greater_than": "> {gt}",
        "less_than_equal": "<= {le}",
        "less_than": "< {lt}",
        "too_short": "at least {min_length} item(s)",
        "too_long": "at most {max_length} item(s)",
        "literal_error": "one of {expected}",
        "enum": "one of {expected}",
    }
    if kind in bounds:
        try:
            return bounds[kind].format(**ctx)
        except KeyError:
            return None
    simple = {
        "int_parsing": "an integer",
        "int_type": "an integer",
        "int_from_float": "an integer",
        "bool_parsing": "true or false",
        "bool_type": "true or false",
        "float_parsing": "a number",
        "float_type": "a number",
        "string_type": "a string",
        "dict_type": "a mapping (key: value lines)",
        "model_type": "a mapping (key: value lines)",
        "list_type": "a list",
        "ip_v4_network": "an IPv4 prefix with no host bits set, e.g. 10.0.0.0/16",
        "ip_v6_network": "an IPv6 prefix with no host bits set, e.g. fd00::/48",
    }
    return simple.get(kind)


def _fields_at(model: type[BaseModel], path: Path_) -> list[str]:
    """Field names of the model found by following `path` from `model` (for 'did you mean')."""
    current: Any = model
    for part in path:
        if isinstance(part, int) or part == "[key]":
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        info = current.model_fields.get(str(part))
        if info is None:
            # A dict keyed by user names (catalog models): stay on the value type.
            continue
        current = _model_in(info.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _is_network_field(model: type[BaseModel], path: Path_) -> bool:
    names = [part for part in path if isinstance(part, str) and part != "[key]"]
    if not names:
        return False
    current: Any = model
    for part in names[:-1]:
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return False
        current = _model_in(current.model_fields[part].annotation)
    if not (isinstance(current, type) and issubclass(current, BaseModel)):
        return False
    info = current.model_fields.get(names[-1])
    return info is not None and "Network" in str(info.annotation)


def _model_in(annotation: Any) -> Any:
    """The first BaseModel class inside an annotation such as `list[Zone]` or `Aggregation | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


# --- catalogs -------------------------------------------------------------------------------------
BUILTIN_CATALOG = "builtin_catalog.yaml"


def builtin_catalog_raw() -> tuple[dict[str, Any], Marks]:
    resource = resources.files("netgen.intent").joinpath(BUILTIN_CATALOG)
    with resources.as_file(resource) as path:
        data, marks = read_yaml(Path(path), f"<netgen>/{BUILTIN_CATALOG}")
    return data, marks


def load_catalog(extra: Path | None = None, extra_display: str | None = None) -> Catalog:
    """The built-in catalog plus, optionally, a user catalog file (which may `extends:` models)."""
    base_raw, base_marks = builtin_catalog_raw()
    raw_models: dict[str, Any] = dict(base_raw.get("models", {}))
    problems: list[InputProblem] = []
    models: dict[str, PlatformModel] = {}
    # The built-in catalog is trusted but still validated, so a bad edit to it fails loudly.
    _validate_models(raw_models, base_marks, f"<netgen>/{BUILTIN_CATALOG}", models, problems)
    if extra is not None:
        display = extra_display or str(extra)
        data, marks = read_yaml(extra, display)
        user_models = _catalog_models_section(data, display)
        resolved: dict[str, Any] = {}
        for name, entry in user_models.items():
            if not isinstance(name, str):
                problems.append(_at(display, marks, ("models", str(name)), "a model name must be text",
                                    given=show_value(name), allowed=_PATTERN_TEXT[NAME_PATTERN]))
                continue
            where = ("models", name)
            if name in raw_models:
                problems.append(
                    _at(display, marks, where, f"model {show_value(name)} is already in the built-in catalog",
                        allowed="a new name; use 'extends: <built-in name>' to derive from it")
                )
                continue
            if not isinstance(entry, dict):
                problems.append(_at(display, marks, where, "a model must be a mapping", given=show_value(entry)))
                continue
            merged = _resolve_extends(name, entry, raw_models, user_models, display, marks, problems)
            if merged is not None:
                resolved[name] = merged
        _validate_models(resolved, marks, display, models, problems)
    if problems:
        raise NetgenInputError(problems)
    return Catalog.model_construct(models=models)


def _catalog_models_section(data: Any, display: str) -> dict[str, Any]:
    if not isinstance(data, dict) or set(data) - {"models"} or not isinstance(data.get("models"), dict):
        raise _fail(display, "a catalog file must be a mapping with one key, 'models: {name: {...}}'")
    return dict(data["models"])


def _resolve_extends(
    name: str,
    entry: dict[str, Any],
    builtin: dict[str, Any],
    user: dict[str, Any],
    display: str,
    marks: Marks,
    problems: list[InputProblem],
) -> dict[str, Any] | None:
    chain = [name]
    merged = {k: v for k, v in entry.items() if k != "extends"}
    parent = entry.get("extends")
    while parent is not None:
        if not isinstance(parent, str) or parent in chain:
            cycle = " -> ".join(show_value(n) for n in [*chain, parent])
            problems.append(_at(display, marks, ("models", name, "extends"),
                                f"extends must name another model without cycles ({cycle})",
                                given=show_value(entry.get("extends"))))
            return None
        chain.append(parent)
        base = user.get(parent, builtin.get(parent))
        if not isinstance(base, dict):
            choices = sorted(str(n) for n in {*builtin, *user} - {name})
            problems.append(_at(display, marks, ("models", name, "extends"), f"unknown model {show_value(parent)}",
                                allowed=", ".join(choices)))
            return None
        merged = _deep_merge({k: v for k, v in base.items() if k != "extends"}, merged)
        parent = base.get("extends") if parent in user else None
    return merged


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _deep_merge(result[key], value)
        else:
            result[key] = value
    return result


def _validate_models(
    raw: dict[str, Any], marks: Marks, display: str, out: dict[str, PlatformModel], problems: list[InputProblem]
) -> None:
    for name, entry in raw.items():
        if not isinstance(name, str) or not _is_safe_name(name):
            problems.append(_at(display, marks, ("models", str(name)), "invalid model name",
                                given=show_value(name), allowed=_PATTERN_TEXT[NAME_PATTERN]))
            continue
        try:
            out[name] = validate(PlatformModel, entry, marks, display, ("models", name))
        except NetgenInputError as exc:
            problems.extend(exc.problems)


def _is_safe_name(name: str) -> bool:
    # fullmatch: with re.match, NAME_PATTERN's '$' would also match before a trailing newline.
    return re.fullmatch(NAME_PATTERN, name) is not None


def _at(
    display: str, marks: Marks, path: Path_, message: str, given: str | None = None, allowed: str | None = None
) -> InputProblem:
    line, column = _nearest_mark(path, marks)
    return InputProblem(display, dotted(path), message, line, column, given, allowed)


# --- fabric ---------------------------------------------------------------------------------------
def resolve_fabric_path(path: Path) -> Path:
    if path.is_dir():
        for name in FABRIC_FILE_NAMES:
            if (path / name).is_file():
                return path / name
        raise _fail(str(path), f"directory has no {' or '.join(FABRIC_FILE_NAMES)}")
    return path


def load_fabric(path: Path | str) -> LoadedFabric:
    """Read, validate and cross-check a fabric file. Raises NetgenInputError with every problem."""
    source = resolve_fabric_path(Path(path))
    display = str(source)
    data, marks = read_yaml(source, display)
    if not isinstance(data, dict):
        raise NetgenInputError(
            [InputProblem(display, "", "the top level must be a mapping of settings", 1, 1,
                          given=show_value(data), allowed="name:, addressing:, zones:, ...")]
        )
    fabric = validate(Fabric, data, marks, display)
    extra = None
    if fabric.catalog is not None:
        extra = (source.parent / fabric.catalog)
    catalog = load_catalog(extra, str(extra) if extra else None)
    problems = cross_check(fabric, catalog, display, marks)
    if problems:
        raise NetgenInputError(problems)
    return LoadedFabric(fabric=fabric, catalog=catalog, source=source)


def cross_check(fabric: Fabric, catalog: Catalog, display: str, marks: Marks) -> list[InputProblem]:
    """Input errors that need more than one field: references to the catalog, duplicate zone ids."""
    problems: list[InputProblem] = []
    names = sorted(catalog.models)

    def unknown_model(path: Path_, value: str) -> None:
        close = difflib.get_close_matches(value, names, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        problems.append(_at(display, marks, path, f"unknown platform model '{value}'", given=repr(value),
                            allowed=hint + "a model from the catalog: " + ", ".join(names)))

    seen: dict[int, int] = {}
    for index, zone in enumerate(fabric.zones):
        for attr in ("rtsw_model", "ctsw_model"):
            value = getattr(zone, attr)
            if value not in catalog.models:
                unknown_model(("zones", index, attr), value)
        if zone.id in seen:
            problems.append(_at(display, marks, ("zones", index, "id"),
                                f"zone id {zone.id} is already used by zones[{seen[zone.id]}]",
                                allowed="a unique zone id per zone"))
        seen.setdefault(zone.id, index)
        if zone.id > fabric.addressing.max_zones:
            problems.append(_at(display, marks, ("zones", index, "id"),
                                f"zone id {zone.id} exceeds addressing.max_zones ({fabric.addressing.max_zones})",
                                allowed=f"1..{fabric.addressing.max_zones}, or raise addressing.max_zones"))
    objects = sum(
        z.racks * (z.hosts_per_rack * z.nics_per_host + z.ctsw_count * z.links_per_rtsw_ctsw)
        + (z.ctsw_count * fabric.aggregation.uplinks_per_ctsw if fabric.aggregation else 0)
        for z in fabric.zones
    )
    if objects > MAX_FABRIC_OBJECTS:
        problems.append(_at(display, marks, ("zones",),
                            f"the fabric would have {objects:,} links and NIC attachments",
                            allowed=f"at most {MAX_FABRIC_OBJECTS:,}: check racks, counts and links per pair"))
    if fabric.aggregation and fabric.aggregation.atsw_model not in catalog.models:
        unknown_model(("aggregation", "atsw_model"), fabric.aggregation.atsw_model)
    return problems
