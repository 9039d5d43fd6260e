"""Turn pydantic validation errors into InputProblems that name file, place, field, given, allowed."""

from __future__ import annotations

import difflib
import json
from ipaddress import ip_network
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from netgen.intent.custom import looks_like_secret
from netgen.intent.errors import InputProblem, NetgenInputError, Path_, dotted, show_value
from netgen.intent.secrets import SecretRef
from netgen.intent.types import FILE_PATH_PATTERN, HOSTNAME_PREFIX_PATTERN, NAME_PATTERN, TEXT_PATTERN
from netgen.intent.yaml_source import Marks, nearest_mark

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
        line, column = nearest_mark(path, marks)
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
PATTERN_TEXT = {
    NAME_PATTERN: "a name of letters, digits, '_', '.', '-' starting with a letter or digit, <= 63 chars",
    TEXT_PATTERN: "letters, digits, spaces and _ . , : / ( ) + = @ - [ ] only, <= 200 chars"
    " (no newline, control character, quote, '!' or '#')",
    HOSTNAME_PREFIX_PATTERN: "empty, or lower-case letters, digits and '-' ending with '-', e.g. 'snc1-'",
    FILE_PATH_PATTERN: "a file path of letters, digits, '_', '.', '/', '-'",
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


def _problem(
    path: Path_, errors: list[ErrorDetails], marks: Marks, display: str, model: type[BaseModel], skip: int
) -> InputProblem:
    first = errors[0]
    kind = first["type"]
    line, column = nearest_mark(path, marks)
    messages = list(dict.fromkeys(_message(e) for e in errors))
    # a secret written where its reference belongs is never echoed back, nor any text that looks
    # like it holds one (a custom_config line refused as a secret, in whichever error it meets)
    given_value = first.get("input")
    hidden = (kind == "missing" or _is_secret_field(model, path[skip:])
              or (isinstance(given_value, str) and looks_like_secret(given_value)))
    given: str | None = None if hidden else show_value(given_value)
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
        return PATTERN_TEXT.get(pattern, f"text matching {pattern}")
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


def _model_at(model: type[BaseModel], names: list[str]) -> type[BaseModel] | None:
    """The model reached by following field names from `model`; keys of user-named dicts (catalog
    models, ASN overrides) are not fields and are stepped over."""
    current: Any = model
    for part in names:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        info = current.model_fields.get(part)
        if info is not None:
            current = _model_in(info.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _names(path: Path_) -> list[str]:
    return [part for part in path if isinstance(part, str) and part != "[key]"]


def _fields_at(model: type[BaseModel], path: Path_) -> list[str]:
    """Field names of the model found by following `path` from `model` (for 'did you mean')."""
    found = _model_at(model, _names(path))
    return list(found.model_fields) if found else []


def _is_network_field(model: type[BaseModel], path: Path_) -> bool:
    names = _names(path)
    parent = _model_at(model, names[:-1]) if names else None
    info = parent.model_fields.get(names[-1]) if parent else None
    return info is not None and "Network" in str(info.annotation)


def _is_secret_field(model: type[BaseModel], path: Path_) -> bool:
    """Whether `path` goes through a field that holds a secret reference (SecretRef)."""
    names = _names(path)
    for depth, name in enumerate(names):
        parent = _model_at(model, names[:depth])
        info = parent.model_fields.get(name) if parent else None
        if info is not None and _model_in(info.annotation) is SecretRef:
            return True
    return False


def _model_in(annotation: Any) -> Any:
    """The first BaseModel class inside an annotation such as `list[Zone]` or `Aggregation | None`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


