"""Load a fabric file (and its catalogs) into validated models, or raise NetgenInputError.

Three steps, each its own module: read YAML with positions (yaml_source), validate into the
pydantic models with precise problems (problems), then cross-check what one model cannot see
alone (catalog references, duplicate zone ids, overall size).
"""

from __future__ import annotations

import copy
import difflib
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, get_args

from netgen.intent.catalog import AsicFamily, AsicFamilyBuffers, Catalog, InfinibandSwitchModel, PlatformModel
from netgen.intent.errors import InputProblem, NetgenInputError, Path_, dotted, show_value
from netgen.intent.fabric import Fabric
from netgen.intent.infiniband import Infiniband
from netgen.intent.problems import PATTERN_TEXT, validate
from netgen.intent.secrets import SecretError, SecretRef, read_hash, read_shared
from netgen.intent.services import SHA512_CRYPT, Aaa
from netgen.intent.types import NAME_PATTERN
from netgen.intent.yaml_source import Marks, fail, nearest_mark, read_yaml, read_yaml_stream

FABRIC_FILE_NAMES = ("fabric.yaml", "fabric.yml")
# Far above any real fabric (meta-24k has about 53k links + NICs), low enough that a typo such as
# racks: 40960 fails in a second instead of exhausting memory.
MAX_FABRIC_OBJECTS = 2_000_000


STDIN = "-"  # FABRIC `-`: the fabric file from standard input; paths in it relative to the current directory
STDIN_DISPLAY = "<stdin>"


@dataclass(frozen=True)
class LoadedFabric:
    """A validated fabric with the catalog it was validated against, and where each of its fields
    is in the fabric file (line, column: for problems found after loading, e.g. secret references)."""

    fabric: Fabric
    catalog: Catalog
    source: Path
    marks: Marks = field(default_factory=dict, repr=False, compare=False)

    @property
    def display(self) -> str:
        """The fabric file as problems name it."""
        return STDIN_DISPLAY if str(self.source) == STDIN else str(self.source)


# --- catalogs -------------------------------------------------------------------------------------
BUILTIN_CATALOG = "builtin_catalog.yaml"


def builtin_catalog_raw() -> tuple[dict[str, Any], Marks]:
    resource = resources.files("netgen.intent").joinpath(BUILTIN_CATALOG)
    with resources.as_file(resource) as path:
        data, marks = read_yaml(Path(path), f"<netgen>/{BUILTIN_CATALOG}")
    return data, marks


def load_catalog(extra: Path | None = None, extra_display: str | None = None) -> Catalog:
    """The built-in catalog plus, optionally, a user catalog file (which may `extends:` models and
    add ASIC families)."""
    base_raw, base_marks = builtin_catalog_raw()
    raw_models: dict[str, Any] = dict(base_raw.get("models", {}))
    problems: list[InputProblem] = []
    models: dict[str, PlatformModel] = {}
    families: dict[AsicFamily, AsicFamilyBuffers] = {}
    builtin_display = f"<netgen>/{BUILTIN_CATALOG}"
    # The built-in catalog is trusted but still validated, so a bad edit to it fails loudly.
    _validate_families(dict(base_raw.get("asic_families", {})), base_marks, builtin_display, families, problems)
    _validate_models(raw_models, base_marks, builtin_display, models, problems)
    _check_families(models, families, base_marks, builtin_display, problems)
    ib_switches: dict[str, InfinibandSwitchModel] = {}
    _validate_ib_switches(dict(base_raw.get("infiniband_switches", {})), base_marks, builtin_display, ib_switches,
                          problems)
    if extra is not None:
        display = extra_display or str(extra)
        data, marks = read_yaml(extra, display)
        user_models, user_families = _catalog_sections(data, display)
        user_ib = data.get("infiniband_switches", {})
        for name in sorted(str(n) for n in set(user_ib) & set(ib_switches)):
            problems.append(_at(display, marks, ("infiniband_switches", name),
                                f"InfiniBand switch {show_value(name)} is already in the built-in catalog",
                                allowed="a new name"))
        _validate_ib_switches({k: v for k, v in user_ib.items() if k not in ib_switches}, marks, display,
                              ib_switches, problems)
        for family in sorted(set(user_families) & set(families)):
            problems.append(_at(display, marks, ("asic_families", family),
                                f"ASIC family {show_value(family)} is already in the built-in catalog",
                                allowed="a family the built-in catalog lacks"))
        added: dict[AsicFamily, AsicFamilyBuffers] = {}
        _validate_families({k: v for k, v in user_families.items() if k not in families}, marks, display, added,
                           problems)
        families.update(added)
        resolved: dict[str, Any] = {}
        for name, entry in user_models.items():
            if not isinstance(name, str):
                problems.append(_at(display, marks, ("models", str(name)), "a model name must be text",
                                    given=show_value(name), allowed=PATTERN_TEXT[NAME_PATTERN]))
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
        user_valid: dict[str, PlatformModel] = {}
        _validate_models(resolved, marks, display, user_valid, problems)
        _check_families(user_valid, families, marks, display, problems)
        models.update(user_valid)
    if problems:
        raise NetgenInputError(problems)
    return Catalog.model_construct(models=models, asic_families=families, infiniband_switches=ib_switches)


def _catalog_sections(data: Any, display: str) -> tuple[dict[str, Any], dict[str, Any]]:
    shape = ("a catalog file must be a mapping of 'models: {name: {...}}' and optionally 'asic_families: {...}'"
             " and 'infiniband_switches: {...}'")
    if not isinstance(data, dict) or set(data) - {"models", "asic_families", "infiniband_switches"}:
        raise fail(display, shape)
    if not isinstance(data.get("models"), dict):
        raise fail(display, shape)
    families = data.get("asic_families", {})
    if not isinstance(families, dict) or not isinstance(data.get("infiniband_switches", {}), dict):
        raise fail(display, shape)
    return dict(data["models"]), dict(families)


def _validate_families(raw: dict[str, Any], marks: Marks, display: str,
                       out: dict[AsicFamily, AsicFamilyBuffers], problems: list[InputProblem]) -> None:
    known = {str(family): family for family in get_args(AsicFamily)}
    for name, entry in raw.items():
        family = known.get(name) if isinstance(name, str) else None
        if family is None:
            problems.append(_at(display, marks, ("asic_families", str(name)), "unknown ASIC family",
                                given=show_value(name), allowed=", ".join(sorted(known))))
            continue
        try:
            out[family] = validate(AsicFamilyBuffers, entry, marks, display, ("asic_families", name))
        except NetgenInputError as exc:
            problems.extend(exc.problems)


def _check_families(models: dict[str, PlatformModel], families: dict[AsicFamily, AsicFamilyBuffers], marks: Marks,
                    display: str, problems: list[InputProblem]) -> None:
    """Every model's ASIC family needs its buffer facts: headroom and budgets are computed from them."""
    for name, model in models.items():
        if model.asic_family not in families:
            problems.append(_at(display, marks, ("models", name, "asic_family"),
                                f"no buffer facts for ASIC family {show_value(model.asic_family)} in the catalog",
                                given=show_value(model.asic_family),
                                allowed="a family with an asic_families entry: " + ", ".join(sorted(families))
                                + "; or add one in your catalog file"))


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


Entry = TypeVar("Entry", PlatformModel, InfinibandSwitchModel)


def _validate_entries(kind: type[Entry], section: str, raw: dict[str, Any], marks: Marks, display: str,
                      out: dict[str, Entry], problems: list[InputProblem]) -> None:
    """Each named entry of a catalog section (`models`, `infiniband_switches`) validated as `kind`."""
    for name, entry in raw.items():
        if not isinstance(name, str) or not _is_safe_name(name):
            problems.append(_at(display, marks, (section, str(name)), "invalid model name",
                                given=show_value(name), allowed=PATTERN_TEXT[NAME_PATTERN]))
            continue
        try:
            out[name] = validate(kind, entry, marks, display, (section, name))
        except NetgenInputError as exc:
            problems.extend(exc.problems)


def _validate_models(
    raw: dict[str, Any], marks: Marks, display: str, out: dict[str, PlatformModel], problems: list[InputProblem]
) -> None:
    _validate_entries(PlatformModel, "models", raw, marks, display, out, problems)


def _validate_ib_switches(raw: dict[str, Any], marks: Marks, display: str, out: dict[str, InfinibandSwitchModel],
                          problems: list[InputProblem]) -> None:
    _validate_entries(InfinibandSwitchModel, "infiniband_switches", raw, marks, display, out, problems)


def _is_safe_name(name: str) -> bool:
    # fullmatch: with re.match, NAME_PATTERN's '$' would also match before a trailing newline.
    return re.fullmatch(NAME_PATTERN, name) is not None


def _at(
    display: str, marks: Marks, path: Path_, message: str, given: str | None = None, allowed: str | None = None
) -> InputProblem:
    line, column = nearest_mark(path, marks)
    return InputProblem(display, dotted(path), message, line, column, given, allowed)


# --- fabric ---------------------------------------------------------------------------------------
def resolve_fabric_path(path: Path) -> Path:
    if path.is_dir():
        for name in FABRIC_FILE_NAMES:
            if (path / name).is_file():
                return path / name
        raise fail(str(path), f"directory has no {' or '.join(FABRIC_FILE_NAMES)}")
    return path


def load_fabric(path: Path | str) -> LoadedFabric:
    """Read, validate and cross-check a fabric file (`-`: from standard input, relative paths in it
    from the current directory). Raises NetgenInputError with every problem."""
    if str(path) == STDIN:
        source, display = Path(STDIN), STDIN_DISPLAY
        data, marks = read_yaml_stream(sys.stdin.buffer, display)
    else:
        source = resolve_fabric_path(Path(path))
        display = str(source)
        data, marks = read_yaml(source, display)
    if not isinstance(data, dict):
        raise NetgenInputError(
            [InputProblem(display, "", "the top level must be a mapping of settings", 1, 1,
                          given=show_value(data), allowed="name:, addressing:, zones:, ...")]
        )
    fabric = _anchor_secret_files(validate(Fabric, data, marks, display), source.parent)
    extra = None
    if fabric.catalog is not None:
        extra = (source.parent / fabric.catalog)
    catalog = load_catalog(extra, str(extra) if extra else None)
    problems = cross_check(fabric, catalog, display, marks)
    if problems:
        raise NetgenInputError(problems)
    return LoadedFabric(fabric=fabric, catalog=catalog, source=source, marks=marks)


def _anchor_secret_files(fabric: Fabric, base: Path) -> Fabric:
    """Secret files named relative to the fabric file, made absolute: a render or deploy started
    anywhere reads the file the fabric file means. Nothing is read here (secrets are read only where
    they are used)."""
    def anchored(ref: SecretRef) -> SecretRef:
        kind = "file" if ref.file is not None else "vault"
        name = ref.path
        if name is None or Path(name).expanduser().is_absolute():
            return ref
        return ref.model_copy(update={kind: str(base / name)})

    services = fabric.services
    users = [user.model_copy(update={"sha512": anchored(user.sha512)}) for user in services.users]
    def anchored_aaa(aaa: Aaa | None) -> Aaa | None:
        if aaa is not None and aaa.tacacs is not None:
            aaa = aaa.model_copy(update={"tacacs": aaa.tacacs.model_copy(update={"key": anchored(aaa.tacacs.key)})})
        if aaa is not None and aaa.radius is not None:
            aaa = aaa.model_copy(update={"radius": aaa.radius.model_copy(update={"key": anchored(aaa.radius.key)})})
        return aaa

    aaa = anchored_aaa(services.aaa)
    overrides = [o.model_copy(update={"aaa": anchored_aaa(o.aaa)}) if o.aaa is not None else o
                 for o in services.overrides]
    snmp = services.snmp
    if snmp is not None:
        snmp = snmp.model_copy(update={"users": [
            u.model_copy(update={"auth_key": anchored(u.auth_key), "priv_key": anchored(u.priv_key)})
            for u in snmp.users]})
    bgp = fabric.bgp
    if bgp.password is not None:
        bgp = bgp.model_copy(update={"password": anchored(bgp.password)})
    return fabric.model_copy(update={"bgp": bgp, "services": services.model_copy(
        update={"users": users, "aaa": aaa, "snmp": snmp, "overrides": overrides})})


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
    if fabric.infiniband is not None:
        problems.extend(_infiniband_references(fabric.infiniband, fabric, catalog, display, marks))
    return problems


def _infiniband_references(ib: Infiniband, fabric: Fabric, catalog: Catalog, display: str,
                           marks: Marks) -> list[InputProblem]:
    """The InfiniBand section's switch model is a catalog entry; its partitions name zones that exist."""
    problems: list[InputProblem] = []
    switches = sorted(catalog.infiniband_switches)
    if ib.switch_model not in catalog.infiniband_switches:
        close = difflib.get_close_matches(ib.switch_model, switches, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        problems.append(_at(display, marks, ("infiniband", "switch_model"),
                            f"unknown InfiniBand switch model '{ib.switch_model}'", given=repr(ib.switch_model),
                            allowed=hint + "a model from the catalog's infiniband_switches: "
                            + (", ".join(switches) or "(none)")))
    zone_ids = {zone.id for zone in fabric.zones}
    for index, partition in enumerate(ib.partitions):
        for position, zone in enumerate(partition.zones):
            if zone not in zone_ids:
                problems.append(_at(display, marks, ("infiniband", "partitions", index, "zones", position),
                                    f"partition {partition.name} names zone {zone}, which the fabric does not have",
                                    allowed="a zone id of the fabric: " + ", ".join(str(z) for z in sorted(zone_ids))))
    return problems


# --- secret references ----------------------------------------------------------------------------
@dataclass(frozen=True)
class SecretCheck:
    """What `netgen validate` finds reading each secret reference as its user will: `errors` stop a
    render (a local user's hash: exit 2, as the render's own), `warnings` would stop a deploy (a key
    the deploy fills in; the machine that validates need not be the one that deploys)."""

    errors: list[InputProblem]
    warnings: list[InputProblem]


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _path_of(dotted_path: str) -> Path_:
    """`services.overrides[3].aaa.radius.key` -> ('services', 'overrides', 3, 'aaa', 'radius', 'key')."""
    return tuple(int(index) if index else name for name, index in _PART.findall(dotted_path))


def secret_problem(loaded: LoadedFabric, where: str, ref: SecretRef, message: str) -> InputProblem:
    """A problem with the secret reference at fabric-file path `where`, placed where the reference
    is written (its `env:`, `file:` or `vault:` key)."""
    kind = "env" if ref.env is not None else "file" if ref.file is not None else "vault"
    line, column = nearest_mark((*_path_of(where), kind), loaded.marks)
    return InputProblem(loaded.display, where, message.removeprefix(f"{where}: "), line, column)


def check_secrets(loaded: LoadedFabric, *, deploy: bool = True) -> SecretCheck:
    """Read every secret reference of the fabric as the render (local users' hashes) and, with
    `deploy`, the deploy (the keys it fills in) read them, through the same functions, so that what
    passes here passes there. Values are read and dropped; no problem quotes one."""
    fabric = loaded.fabric
    errors: list[InputProblem] = []
    for index, user in enumerate(fabric.services.users):
        where = f"services.users[{index}].sha512"
        try:
            read_hash(user.sha512, where, SHA512_CRYPT)
        except SecretError as exc:
            errors.append(secret_problem(loaded, where, user.sha512, f"{exc} (`netgen render` reads it)"))
    warnings: list[InputProblem] = []
    for where, ref in fabric.shared_secrets().items() if deploy else ():
        try:
            read_shared(ref, where)
        except SecretError as exc:
            warnings.append(secret_problem(loaded, where, ref, f"{exc} (`netgen deploy` reads it to fill it in on"
                                                               " the way to the switch)"))
    return SecretCheck(errors, warnings)
