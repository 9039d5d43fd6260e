"""Load a fabric file (and its catalogs) into validated models, or raise NetgenInputError.

YAML is parsed with PyYAML's safe loader; alongside the data we keep the line/column of every
node so that a pydantic error at `zones.1.ctsw_count` can be reported as `fabric.yaml:23:17`.
"""

from __future__ import annotations

import copy
import difflib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from netgen.intent.catalog import Catalog, PlatformModel
from netgen.intent.errors import InputProblem, NetgenInputError, show_value
from netgen.intent.fabric import Fabric
from netgen.intent.types import NAME_PATTERN, TEXT_PATTERN

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
        if path.stat().st_size > MAX_FILE_BYTES:
            raise _fail(display, f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        text = path.read_text(encoding="utf-8")
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
    loader = yaml.SafeLoader(text)
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
    except yaml.YAMLError as exc:
        raise _fail(display, f"YAML error: {exc}") from None
    except RecursionError:
        raise _fail(display, "YAML nesting is too deep") from None
    finally:
        loader.dispose()
    marks: Marks = {}
    _collect_marks(node, (), marks)
    return data, marks


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


# --- pydantic errors -> input problems ------------------------------------------------------------
_PATTERN_TEXT = {
    NAME_PATTERN: "a name of letters, digits, '_', '.', '-' starting with a letter or digit, <= 63 chars",
    TEXT_PATTERN: "letters, digits, spaces and _ . , : / ( ) + = @ - [ ] only, <= 200 chars"
    " (no newline, control character, quote, '!' or '#')",
}


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


def dotted(path: Path_) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            text += " (key)"
        else:
            text += f".{part}" if text else str(part)
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
        messages = [f"unknown key '{key}'"]
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
        key = str(path[-1])
        close = difflib.get_close_matches(key, fields, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return hint + "known keys: " + ", ".join(fields)
    if kind == "missing":
        return "add this field"
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
            where = ("models", name)
            if name in raw_models:
                problems.append(
                    _at(display, marks, where, f"model '{name}' is already in the built-in catalog",
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
            problems.append(_at(display, marks, ("models", name, "extends"),
                                "extends must name another model without cycles", given=show_value(parent)))
            return None
        chain.append(parent)
        base = user.get(parent, builtin.get(parent))
        if not isinstance(base, dict):
            choices = sorted({*builtin, *user} - {name})
            problems.append(_at(display, marks, ("models", name, "extends"), f"unknown model '{parent}'",
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
            out[name] = PlatformModel.model_validate(entry)
        except ValidationError as exc:
            problems.extend(problems_from_validation(exc, entry, marks, display, PlatformModel, ("models", name)))


def _is_safe_name(name: str) -> bool:
    return re.match(NAME_PATTERN, name) is not None


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
    try:
        fabric = Fabric.model_validate(data)
    except ValidationError as exc:
        raise NetgenInputError(problems_from_validation(exc, data, marks, display, Fabric)) from None
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
    if fabric.aggregation and fabric.aggregation.atsw_model not in catalog.models:
        unknown_model(("aggregation", "atsw_model"), fabric.aggregation.atsw_model)
    return problems
