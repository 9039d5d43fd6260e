"""mkdocs hook: the reference pages' generated parts, written from the code at build time.

A page asks for a generated part with a marker line, `<!-- netgen:NAME -->`, which this hook
replaces with the Markdown that GENERATORS[NAME] returns (nothing generated is committed):

  commands        every command and subcommand of `netgen` (click: the group's lazily loaded commands
                  included), with its help, usage and options
  exit-codes      the exit codes (netgen.cli's docstring) and what each command's help says of them
  fabric-schema   the fabric file, from the JSON Schema `netgen schema` prints
  catalog-schema  a platform catalog file, from `netgen schema --kind catalog`
  design-checks   every check of netgen.checks.REGISTRY (code, title, docstring) with a failing and a
                  passing example: rows of tests/checks/test_design_checks.py's CASES, so the docs'
                  examples are the tested ones; each failing example is also validated here, at
                  build time, and its real finding shown
  layout          the packages and modules of netgen/, from their docstrings
  api             netgen.api's public names (its __all__): signatures, fields and docstrings

The hook imports nothing from mkdocs, so tests/docs/test_docs.py calls the generators directly.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!-- netgen:([a-z-]+) -->$", re.MULTILINE)
SMALL = ROOT / "inventory" / "small"



def _checkout_importable() -> None:
    """`tests` (the design-check cases) is imported from the checkout. mkdocs restores sys.path
    after loading a hook, so this runs when a generator runs, not at import."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


# --- mkdocs entry points ------------------------------------------------------------------------
def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    _checkout_importable()
    def generated(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise KeyError(f"{page.file.src_uri}: unknown generated part {name!r} (known: {sorted(GENERATORS)})")
        return GENERATORS[name]()

    return MARKER.sub(generated, markdown)


# --- Markdown helpers ---------------------------------------------------------------------------
_CODE_SPAN = re.compile(r"(`[^`]*`)")


def text(value: str) -> str:
    """Plain text (a help string, a description) as Markdown: characters Markdown would act on are
    escaped outside code spans, which stay as they are."""
    parts = _CODE_SPAN.split(value)
    for i in range(0, len(parts), 2):
        parts[i] = (parts[i].replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
                    .replace(">", "&gt;").replace("*", "\\*").replace("_", "\\_").replace("[", "\\["))
    return "".join(parts)


def code(value: str) -> str:
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def anchor(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _paragraphs(help_text: str) -> list[str]:
    """click help text as paragraphs: `\\b` (keep as is) blocks become code blocks."""
    out = []
    for block in re.split(r"\n\s*\n", inspect.cleandoc(help_text)):
        if block.startswith("\b"):
            out.append("```text\n" + block.lstrip("\b").strip("\n") + "\n```")
        else:
            out.append(text(" ".join(line.strip() for line in block.splitlines())))
    return out


# --- commands -------------------------------------------------------------------------------------
def _walk(command: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    import click  # noqa: PLC0415

    yield command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)  # loads a lazily registered command's module
            if sub is None or sub.hidden:
                continue
            yield from _walk(sub, click.Context(sub, info_name=name, parent=ctx))


def _commands() -> list[tuple[Any, Any]]:
    import click  # noqa: PLC0415

    from netgen.cli import cli  # noqa: PLC0415

    root = click.Context(cli, info_name="netgen", **cli.context_settings)
    return list(_walk(cli, root))


def _takes_fabric(command: Any) -> bool:
    import click  # noqa: PLC0415

    return any(isinstance(p, click.Argument) and p.name == "fabric" for p in command.params)


@functools.cache
def commands() -> str:
    import click  # noqa: PLC0415

    out: list[str] = []
    for command, ctx in _commands():
        path = ctx.command_path
        out.append(f"## {path} {{#{anchor(path)}}}\n")
        out.extend(p + "\n" for p in _paragraphs(command.help or command.short_help or ""))
        pieces = " ".join(command.collect_usage_pieces(ctx))
        out.append(f"```text\n{path} {pieces}\n```\n")
        if isinstance(command, click.Group):
            rows = []
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    rows.append(f"- [`{path} {name}`](#{anchor(f'{path} {name}')}): "
                                f"{text(sub.get_short_help_str(limit=200))}")
            out.append("Commands:\n\n" + "\n".join(rows) + "\n")
        options = []
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                names, help_text = record
                options.append(f"- {code(names)}: {text(help_text)}" if help_text else f"- {code(names)}")
        if options:
            out.append("Options:\n\n" + "\n".join(options) + "\n")
        if _takes_fabric(command):
            out.append("FABRIC and `--json` follow the [command conventions](conventions.md); exit codes as in "
                       "[Exit codes](exit-codes.md).\n")
    return "\n".join(out)


# --- exit codes -----------------------------------------------------------------------------------
_EXIT_SENTENCE = re.compile(r"[^.;]*\bexit(?: code)? \d[^.;]*")


def exit_code_rows() -> list[tuple[int, str]]:
    """(code, meaning) from netgen.cli's docstring, which documents them for scripts."""
    import netgen.cli  # noqa: PLC0415

    doc = inspect.cleandoc(netgen.cli.__doc__ or "")
    block = doc.split("Exit codes", 1)[1].split("\n\n", 1)[0]
    rows: list[tuple[int, str]] = []
    for line in block.splitlines()[1:]:
        found = re.match(r"\s*(\d)\s+(.*)", line)
        if found:
            rows.append((int(found.group(1)), found.group(2).strip()))
        elif rows and line.strip():
            rows[-1] = (rows[-1][0], rows[-1][1] + " " + line.strip())
    return rows


def _balanced(sentence: str) -> str:
    """A sentence cut out of a parenthesis loses the closing bracket it cannot open."""
    while sentence.endswith(")") and sentence.count(")") > sentence.count("("):
        sentence = sentence[:-1].rstrip()
    return sentence


@functools.cache
def exit_codes() -> str:
    from netgen.cli import common  # noqa: PLC0415

    rows = exit_code_rows()
    constants = {common.EXIT_OK, common.EXIT_DESIGN, common.EXIT_INPUT, common.EXIT_INTERNAL}
    if {code_ for code_, _ in rows} != constants:
        raise ValueError(f"netgen.cli's docstring lists exit codes {rows}, the code uses {sorted(constants)}")
    out = ["| code | meaning |", "|---|---|"]
    out += [f"| **{code_}** | {text(meaning)} |" for code_, meaning in rows]
    out.append("\nWhat each command's help adds about its exit codes:\n")
    for command, ctx in _commands():
        said = []
        for source in [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]:
            said += [_balanced(s.strip()) for s in _EXIT_SENTENCE.findall(" ".join(source.split()))]
        if said:
            out.append(f"- [`{ctx.command_path}`](commands.md#{anchor(ctx.command_path)}): "
                       + "; ".join(text(s) for s in dict.fromkeys(said)))
    return "\n".join(out) + "\n"


# --- the fabric file and the catalog, from the JSON Schema ----------------------------------------
def _cli_json(*args: str) -> Any:
    from click.testing import CliRunner  # noqa: PLC0415

    from netgen.cli import cli  # noqa: PLC0415

    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"netgen {' '.join(args)} exited {result.exit_code}: {result.output[-2000:]}")
    return json.loads(result.stdout)


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{anchor(name)})"
    if "anyOf" in schema:
        kinds = [_type(s) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds))
    if "enum" in schema:
        return "one of " + ", ".join(code(json.dumps(v)) for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
        return f"mapping of text to {_type(schema['additionalProperties'])}"
    words = {"string": "text", "integer": "integer", "number": "number", "boolean": "true/false", "object": "mapping"}
    described = words.get(kind, str(kind))
    if "pattern" in schema:
        described += f" matching {code(schema['pattern'])}"
    return described


def _bounds(schema: dict[str, Any]) -> list[str]:
    spelled = {"minimum": ">= {}", "maximum": "<= {}", "exclusiveMinimum": "> {}", "exclusiveMaximum": "< {}",
               "minLength": "at least {} characters", "maxLength": "at most {} characters",
               "minItems": "at least {} item(s)", "maxItems": "at most {} item(s)"}
    out = [form.format(schema[key]) for key, form in spelled.items() if key in schema]
    for alternative in schema.get("anyOf", []):
        out += [b for b in _bounds(alternative) if b not in out]
    return out


def _object(schema: dict[str, Any], required: set[str]) -> list[str]:
    out = []
    for name, field in schema.get("properties", {}).items():
        facts = [_type(field)]
        facts += _bounds(field)
        if name in required:
            facts.append("required")
        elif "default" in field:
            facts.append("default " + code(json.dumps(field["default"], separators=(", ", ": "))))
        description = text(field.get("description", ""))
        out.append(f"- **`{name}`** ({'; '.join(facts)}){': ' + description if description else ''}")
    return out


def _definitions_in_order(schema: dict[str, Any]) -> list[str]:
    """The $defs in the order a reader meets them, breadth first from the top level."""
    defs = schema.get("$defs", {})
    order: list[str] = []
    queue = [schema]
    while queue:
        node = queue.pop(0)
        for ref in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', json.dumps(node.get("properties", {}))):
            if ref not in order:
                order.append(ref)
                queue.append(defs[ref])
    return order + sorted(set(defs) - set(order))


def _schema_page(schema: dict[str, Any], top: str) -> str:
    out = [f"## {top} {{#{anchor(top)}}}\n", text(schema.get("description", "")) + "\n"]
    out += _object(schema, set(schema.get("required", [])))
    for name in _definitions_in_order(schema):
        definition = schema["$defs"][name]
        out.append(f"\n## {name} {{#{anchor(name)}}}\n")
        if definition.get("description"):
            out.append(text(definition["description"]) + "\n")
        if definition.get("properties"):
            out += _object(definition, set(definition.get("required", [])))
        else:
            out.append(f"{_type(definition)}.")
    return "\n".join(out) + "\n"


@functools.cache
def fabric_schema() -> str:
    return _schema_page(_cli_json("schema"), "The fabric file")


@functools.cache
def catalog_schema() -> str:
    return _schema_page(_cli_json("schema", "--kind", "catalog"), "The catalog file")


# --- design checks ------------------------------------------------------------------------------
SERIES = {
    "1": "Capacity: bandwidth, oversubscription and port budgets",
    "2": "Addressing and ASNs",
    "3": "QoS",
    "4": "ECN and buffers",
    "5": "Platform capabilities",
    "6": "Custom configuration and scopes",
    "7": "Hosts against switches",
}
_IDENTITY = ("id", "name")


def _changes(before: Any, after: Any) -> Any:
    """What a mutation changed, as a tree: dicts of changed keys, {"__items__": {index: tree}} for
    lists changed item by item, ("set", old, new) / ("add", new) / ("del", old) at the leaves."""
    if before == after:
        return None
    if isinstance(before, dict) and isinstance(after, dict):
        tree: dict[str, Any] = {}
        for key in list(before) + [k for k in after if k not in before]:
            if key not in after:
                tree[key] = ("del", before[key])
            elif key not in before:
                tree[key] = ("add", after[key])
            elif (sub := _changes(before[key], after[key])) is not None:
                tree[key] = sub
        return tree
    if (isinstance(before, list) and isinstance(after, list) and before and after
            and all(isinstance(i, dict) for i in before + after)):
        # item by item, by position: changed items, then those appended or removed at the end
        items: dict[int, Any] = {i: sub for i, (b, a) in enumerate(zip(before, after, strict=False))
                                 if (sub := _changes(b, a)) is not None}
        items.update({i: ("add", a) for i, a in enumerate(after) if i >= len(before)})
        items.update({i: ("del", b) for i, b in enumerate(before) if i >= len(after)})
        return {"__items__": items}
    return ("set", before, after)


def _flow(value: Any) -> str:
    import yaml  # noqa: PLC0415

    dumped: str = yaml.safe_dump(value, default_flow_style=True, width=10**6, sort_keys=False)
    return dumped.strip().removesuffix("...").strip()


def _block(value: Any) -> list[str]:
    """A value in YAML's block style, multi-line text as literal blocks (`|`), as a fabric file
    writes it."""
    import yaml  # noqa: PLC0415

    class Dumper(yaml.SafeDumper):
        pass

    def text_node(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)

    Dumper.add_representer(str, text_node)
    dumped: str = yaml.dump(value, Dumper=Dumper, default_flow_style=None, sort_keys=False, width=100)
    return dumped.rstrip("\n").splitlines()


def _short(value: Any) -> bool:
    return len(_flow(value)) <= 80 and "\n" not in _flow(value)


def _identity(item: Any) -> str:
    if isinstance(item, dict):
        for key in _IDENTITY:
            if key in item:
                return f"{key}: {_flow(item[key])}"
    return ""


def _yaml_lines(tree: dict[str, Any], before: Any, indent: str) -> list[str]:
    lines: list[str] = []
    for key, change in tree.items():
        old = before.get(key) if isinstance(before, dict) else None
        if isinstance(change, tuple):
            kind = change[0]
            if kind == "del":
                lines.append(f"{indent}# {key}: removed (was {_flow(change[1])})"
                             if len(_flow(change[1])) <= 60 else f"{indent}# {key}: removed")
            elif kind == "add" and _short(change[1]):
                lines.append(f"{indent}{key}: {_flow(change[1])}  # added")
            elif kind == "add":
                lines.append(f"{indent}{key}:  # added")
                lines += [f"{indent}  {line}" for line in _block(change[1])]
            else:
                lines.append(f"{indent}{key}: {_flow(change[2])}  # was {_flow(change[1])}")
        elif "__items__" in change:
            lines.append(f"{indent}{key}:")
            for index, sub in change["__items__"].items():
                item = old[index] if isinstance(old, list) and index < len(old) else {}
                if isinstance(sub, tuple) and sub[0] == "add":  # an item appended
                    body = _block(sub[1])
                    lines.append(f"{indent}  - {body[0]}  # added")
                    lines += [f"{indent}    {line}" for line in body[1:]]
                    continue
                if isinstance(sub, tuple):  # an item removed
                    ident = _identity(sub[1])
                    lines.append(f"{indent}  # item {index + 1} removed{' (' + ident + ')' if ident else ''}")
                    continue
                ident = _identity(item)
                body = _yaml_lines(sub, item, indent + "    ")
                if ident and ident.split(":")[0] not in sub:
                    lines.append(f"{indent}  - {ident}")
                else:
                    first = body.pop(0).strip()
                    lines.append(f"{indent}  - {first}")
                lines += body
        else:
            lines.append(f"{indent}{key}:")
            lines += _yaml_lines(change, old, indent + "  ")
    return lines


def snippet(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The part of the fabric file a mutation changed, as YAML with the old values in comments."""
    tree = _changes(before, after)
    return "\n".join(_yaml_lines(tree or {}, before, ""))


def apply_snippet_tree(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Rebuild `after` from `before` and the change tree alone: what tests/docs checks, so that
    the snippet shown is all the example changes."""
    def apply(node: Any, change: Any) -> Any:
        if change is None:
            return node
        if isinstance(change, tuple):
            return change[-1] if change[0] != "del" else _DELETED
        if "__items__" in change:
            items = [apply(item, change["__items__"].get(i)) for i, item in enumerate(node)]
            items += [sub[1] for i, sub in sorted(change["__items__"].items())
                      if i >= len(node) and isinstance(sub, tuple) and sub[0] == "add"]
            return [item for item in items if item is not _DELETED]
        result = dict(node)
        for key, sub in change.items():
            value = apply(node.get(key), sub)
            if value is _DELETED:
                del result[key]
            else:
                result[key] = value
        return result

    return apply(copy.deepcopy(before), _changes(before, after))  # type: ignore[no-any-return]


_DELETED = object()


def design_check_examples() -> dict[str, dict[str, Any]]:
    """Per registered code: its first trusted failing case and first passing case of
    tests/checks/test_design_checks.py, each with the changed fabric and any catalog."""
    import yaml  # noqa: PLC0415

    from netgen.checks import REGISTRY  # noqa: PLC0415

    _checkout_importable()
    from tests.checks.test_design_checks import CASES  # noqa: PLC0415

    small = yaml.safe_load((SMALL / "fabric.yaml").read_text())
    examples: dict[str, dict[str, Any]] = {}
    for code_ in sorted(REGISTRY):
        picked: dict[str, Any] = {}
        for case in CASES:
            if case.code != code_ or case.bug is not None:
                continue
            role = "passing" if case.severity is None else "failing"
            if role in picked:
                continue
            data = copy.deepcopy(small)
            catalog = case.mutate(data)
            picked[role] = {"case": case, "data": data, "catalog": catalog, "snippet": snippet(small, data)}
        examples[code_] = picked
    return examples


def _validate(data: dict[str, Any], catalog: dict[str, Any] | None) -> dict[str, Any]:
    """`netgen validate --json` of the small example with this change (in a temporary folder, with
    the example's secret files beside it, as the tests write it)."""
    import yaml  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="netgen-docs-") as folder:
        path = Path(folder)
        (path / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
        shutil.copytree(SMALL / "secrets", path / "secrets")
        if catalog is not None:
            (path / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
        return _cli_json_any_exit("validate", "--json", str(path / "fabric.yaml"))


def _cli_json_any_exit(*args: str) -> dict[str, Any]:
    from click.testing import CliRunner  # noqa: PLC0415

    from netgen.cli import cli  # noqa: PLC0415

    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _with_private_cache(build: Callable[[], str]) -> str:
    """The ECMP what-if (NG706) keeps results in the user's cache: a build uses one of its own."""
    saved = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory(prefix="netgen-docs-cache-") as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        try:
            return build()
        finally:
            if saved is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = saved


def _example_block(role: str, example: dict[str, Any], code_: str) -> list[str]:
    import yaml  # noqa: PLC0415

    case = example["case"]
    if example["snippet"]:
        out = [f"**{role.capitalize()}** (case `{case.id}`): `inventory/small/fabric.yaml` with\n",
               "```yaml\n" + example["snippet"] + "\n```\n"]
    else:
        out = [f"**{role.capitalize()}** (case `{case.id}`): `inventory/small/fabric.yaml` as it is.\n"]
    if example["catalog"] is not None:
        out.append("and beside it `catalog.yaml`:\n")
        out.append("```yaml\n" + yaml.safe_dump(example["catalog"], sort_keys=False).strip() + "\n```\n")
    document = _validate(example["data"], example["catalog"])
    found = [f for f in document.get("findings", []) if f["code"] == code_]
    if role == "passing":
        if found:
            raise ValueError(f"{code_} case {case.id}: expected no finding, validate reports {found}")
        out.append(f"`netgen validate` reports no {code_} finding.\n")
        return out
    expected = (case.expect,) if isinstance(case.expect, str) else case.expect
    shown = [f for f in found if f["severity"] == case.severity.value
             and all(part in f["message"] or part in f["subject"] for part in expected)]
    if not shown:
        raise ValueError(f"{code_} case {case.id}: validate does not report it: {found}")
    finding = shown[0]
    among = f", among {len(found)} {code_} findings" if len(found) > 1 else ""
    out.append(f"`netgen validate` reports{among}:\n")
    out.append("```text\n" + f"{finding['severity']} {code_} {finding['subject']}: {finding['message']}\n"
               + f"  fix: {finding['fix']}" + "\n```\n")
    return out


@functools.cache
def design_checks() -> str:
    return _with_private_cache(_design_checks)


def _design_checks() -> str:
    from netgen.checks import REGISTRY  # noqa: PLC0415

    examples = design_check_examples()
    out: list[str] = []
    series = ""
    for code_, check in sorted(REGISTRY.items()):
        if code_[2] != series:
            series = code_[2]
            out.append(f"## NG{series}xx: {SERIES.get(series, 'Other checks')}\n")
        out.append(f"### {code_}: {text(check.title)} {{#{code_.lower()}}}\n")
        module = check.__module__
        out.append(f"`{module}.{check.__name__}`\n")
        doc = inspect.getdoc(check)
        if doc and doc != inspect.getdoc(type(check)):
            out.extend(p + "\n" for p in _paragraphs(doc))
        for role in ("failing", "passing"):
            if role in examples[code_]:
                out += _example_block(role, examples[code_][role], code_)
    return "\n".join(out)


# --- layout ---------------------------------------------------------------------------------------
def _first_paragraph(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


@functools.cache
def layout() -> str:
    package = ROOT / "netgen"
    out = ["| where | what (its docstring) |", "|---|---|"]
    entries = sorted(p for p in package.iterdir()
                     if (p.is_dir() and (p / "__init__.py").is_file()) or (p.suffix == ".py" and p.stem != "__init__"))
    for entry in entries:
        source = entry / "__init__.py" if entry.is_dir() else entry
        name = f"netgen/{entry.name}/" if entry.is_dir() else f"netgen/{entry.name}"
        out.append(f"| `{name}` | {text(_first_paragraph(source)).replace('|', '&#124;')} |")
    return "\n".join(out) + "\n"


# --- the public API ---------------------------------------------------------------------------------
_SECTION = re.compile(r"^(Args|Returns|Raises|Attributes):$")


def _default(value: Any) -> str:
    """A parameter's default as written: a function or class by its name (never its address)."""
    return getattr(value, "__name__", None) or repr(value)


def _signature(name: str, item: Any) -> str:
    """`def name(...) -> ...` with the annotations as written in the source (netgen.api postpones them)."""
    signature = inspect.signature(item)
    params, keyword_only = [], False
    for param in signature.parameters.values():
        if param.kind is param.KEYWORD_ONLY and not keyword_only:
            params.append("*")
            keyword_only = True
        piece = param.name if param.kind is not param.VAR_KEYWORD else f"**{param.name}"
        if param.annotation is not param.empty:
            piece += f": {param.annotation}"
        if param.default is not param.empty:
            piece += f" = {_default(param.default)}"
        params.append(piece)
    returns = "" if signature.return_annotation is signature.empty else f" -> {signature.return_annotation}"
    return f"def {name}({', '.join(params)}){returns}"


def _docstring(doc: str) -> list[str]:
    """A Google-style docstring as Markdown: its paragraphs, then each section (Args, Returns,
    Raises, Attributes) as a bold title over a list, an entry per `name: text` line."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", inspect.cleandoc(doc)) if doc else []:
        lines = block.splitlines()
        if not _SECTION.match(lines[0].strip()):
            out.append(text(" ".join(line.strip() for line in lines)))
            continue
        entries: list[str] = []
        for line in lines[1:]:  # an entry at four spaces, its continuation lines further in
            if (line.startswith("    ") and not line.startswith("     ")) or not entries:
                entries.append(line.strip())
            else:
                entries[-1] += " " + line.strip()
        items = []
        for entry in entries:
            head, sep, rest = entry.partition(": ")
            is_name = sep and re.fullmatch(r"[\w.,* ]+", head) is not None
            items.append(f"* {code(head)}: {text(rest)}" if is_name else f"* {text(entry)}")
        out.append(f"**{lines[0].strip().rstrip(':')}**\n\n" + "\n".join(items))
    return out


def api_reference() -> str:
    """Every name of netgen.api's __all__: functions with their signature, classes with their
    fields, type aliases with their definition; each with its docstring."""
    from netgen import api  # noqa: PLC0415

    out = []
    for name in api.__all__:
        item = getattr(api, name)
        out.append(f"### `{name}` {{#{anchor(name)}}}\n")
        if inspect.isfunction(item):
            out.append(f"```python\n{_signature(name, item)}\n```\n")
        else:
            out.append(f"```python\n{_class(name, item)}\n```\n")
        out.extend(p + "\n" for p in _docstring(inspect.getdoc(item) or ""))
    return "\n".join(out)


def _class(name: str, item: type) -> str:
    """`class Name(Base):` with a dataclass's fields, or a protocol's `__call__` (what a callback takes)."""
    bases = ", ".join(b.__name__ for b in item.__bases__ if b is not object)
    lines = [f"class {name}({bases}):" if bases else f"class {name}:"]
    if dataclasses.is_dataclass(item):
        lines += [f"    {f.name}: {f.type}" for f in dataclasses.fields(item)]
    elif "__call__" in vars(item):
        lines.append("    " + _signature("__call__", vars(item)["__call__"]) + ": ...")
    return "\n".join(lines if len(lines) > 1 else [lines[0].rstrip(":")])


GENERATORS: dict[str, Callable[[], str]] = {
    "commands": commands,
    "exit-codes": exit_codes,
    "fabric-schema": fabric_schema,
    "catalog-schema": catalog_schema,
    "design-checks": design_checks,
    "layout": layout,
    "api": api_reference,
}
