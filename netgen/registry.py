"""The NOS register: every NOS netgen knows is one bundle (netgen/nos/<nos>/ for the built-in ones),
registered by an entry point of the group `netgen.nos`, in the shape of Nornir's PluginRegister.

A bundle (NosBundle) is data: the NOS's name, its template folder, a few plain facts (netmiko's
device type, ...) and each of its parts as an import path, "module:attribute". The register imports
a part only when it is asked for that part, so loading the bundles imports no NOS code: a render
imports the renderers and never a deploy driver (or netmiko), and `netgen --help` imports none of
this. The stages look their part up here through a typed accessor of their own
(platforms/base.py: renderer; deploy/driver.py: driver_factory, default_ownership; lab/adapters.py:
lab_adapter; lab/endpoints.py: lab_shim); none of them names a NOS.

It sits below every stage and imports nothing of netgen: the stages check what a part is, not this.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # imported where the entry points are read: the lab's SONiC stand-in imports this module
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "netgen.nos"
SHIPPED = "netgen.nos"  # the package of the NOSes netgen ships: one found there but not registered is a stale install
REINSTALL = "reinstall netgen so that its entry points are current, e.g. `pip install -e .` in the checkout"

# The parts a bundle may name, each "module:attribute"; the stage that uses a part says what it must be.
Part = Literal["renderer", "driver", "ownership", "lab_adapter", "lab_shim", "day0"]
PARTS: tuple[Part, ...] = ("renderer", "driver", "ownership", "lab_adapter", "lab_shim", "day0")
NAME_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"  # a NOS's name: an entry point's name, a folder's, a catalog's `nos:`
_NAME = re.compile(NAME_PATTERN)
_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class NosRegistryError(Exception):
    """A NOS that is not registered, a bundle that is not a valid one, or a part that cannot be
    imported: said with the NOS, the part and the import path. The command line exits 2."""


@dataclass(frozen=True, slots=True)
class NosBundle:
    """What one NOS brings, as data. Parts are "module:attribute" import paths (None: the NOS has no
    such part, e.g. no deploy driver yet); what each must be is the contract of the stage using it:

    * renderer: a RendererPlugin (netgen/platforms/base.py): the per-device view (`prepare`), the
      files (`render`), the NOS's own model check (`check_device`), the LLDP port ID it sends.
    * driver: a DriverFactory (netgen/deploy/driver.py); ownership: its default Ownership
      (netgen/deploy/ownership.py), which deploy.yaml `ownership.<nos>` may override.
    * lab_adapter: a lab Adapter (netgen/lab/adapters.py): a device's rendered files -> a lab node.
    * lab_shim: a LabShim (netgen/lab/endpoints.py): a stand-in for the NOS's CLI on a netns lab
      router, for `netgen lab up --ssh`.
    * day0: a Day0Files (netgen/day2/replace.py): what a replacement switch boots with, drained, and
      its zero-touch provisioning file (`netgen replace --day0`).

    templates: the folder of its Jinja2 templates, under the repository's templates/ (a name) or
    anywhere (an absolute path: a NOS packaged outside netgen keeps its own).
    custom_parts: the `custom_config` parts that reach its devices (netgen/intent/custom.py).
    netmiko_device_type, ansible_network_os: how Nornir and other Ansible playbooks reach it.
    containerlab_kind: its containerlab node kind (netgen/lab/containerlab.py knows each kind's
    interface names and image)."""

    name: str
    templates: str
    renderer: str
    driver: str | None = None
    ownership: str | None = None
    lab_adapter: str | None = None
    lab_shim: str | None = None
    day0: str | None = None
    custom_parts: tuple[str, ...] = ()
    netmiko_device_type: str | None = None
    ansible_network_os: str | None = None
    containerlab_kind: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise NosRegistryError(f"NOS bundle name {self.name!r}: use 1-32 lowercase letters, digits and _,"
                                   " starting with a letter")
        if (self.driver is None) != (self.ownership is None):
            raise NosRegistryError(f"NOS {self.name!r}: a deploy driver comes with its default ownership (both parts,"
                                   " or neither)")
        for part in PARTS:
            path = getattr(self, part)
            if path is not None and not (isinstance(path, str) and _IMPORT_PATH.match(path)):
                raise NosRegistryError(f"NOS {self.name!r}: part {part} {path!r} is not an import path"
                                       " \"module:attribute\"")

    def template_folder(self, root: Path) -> Path:
        """Its template folder: `templates` under `root` (the repository's templates/), or itself
        when absolute."""
        return root / self.templates


class NosRegister:
    """NOS bundles by name. `auto_register` loads the entry points of `group` (each must give a
    NosBundle named as the entry point), once, when a name is first looked up; `register` adds
    one by hand (tests, an embedding program). Parts are imported on first use and kept."""

    def __init__(self, group: str = ENTRY_POINT_GROUP, shipped: str | None = SHIPPED) -> None:
        self.group = group
        self.shipped = shipped
        self.available: dict[str, NosBundle] = {}
        self._auto_registered = False
        self._parts: dict[tuple[str, str], object] = {}
        self._lock = threading.RLock()  # the rollout's threads look parts up at once

    # --- filling it -----------------------------------------------------------------------------------
    def auto_register(self) -> None:
        """Register the bundle of every entry point of the group (again, if called again). A broken
        entry point registers nothing and is refused again at the next lookup."""
        from importlib import metadata  # noqa: PLC0415  (see TYPE_CHECKING above)

        with self._lock:
            bundles = [self._entry_bundle(entry)
                       for entry in sorted(metadata.entry_points(group=self.group), key=lambda e: e.name)]
            for bundle in bundles:
                self.register(bundle)
            self._auto_registered = True

    def _entry_bundle(self, entry: EntryPoint) -> NosBundle:
        try:
            bundle = entry.load()
        except Exception as exc:  # a broken third-party bundle: named, never a traceback
            raise NosRegistryError(f"NOS {entry.name!r}: entry point {entry.value!r} (group {self.group})"
                                   f" cannot be loaded: {type(exc).__name__}: {exc}") from None
        if not isinstance(bundle, NosBundle):
            raise NosRegistryError(f"NOS {entry.name!r}: entry point {entry.value!r} is a"
                                   f" {type(bundle).__name__}, not a NosBundle")
        if bundle.name != entry.name:
            raise NosRegistryError(f"entry point {entry.name!r} ({entry.value}) gives the bundle of NOS"
                                   f" {bundle.name!r}: the two names must be the same")
        return bundle

    def register(self, bundle: NosBundle) -> None:
        """Add a bundle; the same bundle again is nothing, another one under a taken name an error."""
        if not isinstance(bundle, NosBundle):
            raise NosRegistryError(f"{bundle!r} is not a NosBundle")
        existing = self.available.get(bundle.name)
        if existing is not None and existing != bundle:
            raise NosRegistryError(f"NOS {bundle.name!r} is registered already, by another bundle"
                                   f" (renderer {existing.renderer}, not {bundle.renderer})")
        self.available[bundle.name] = bundle

    def deregister(self, name: str) -> None:
        if name not in self.available:
            raise NosRegistryError(f"NOS {name!r} is not registered")
        del self.available[name]
        self._parts = {key: value for key, value in self._parts.items() if key[0] != name}

    def deregister_all(self) -> None:
        """Forget every bundle (the entry points are not read again unless auto_register is called)."""
        self._auto_registered = True
        self.available = {}
        self._parts = {}

    # --- reading it -----------------------------------------------------------------------------------
    def _loaded(self) -> dict[str, NosBundle]:
        if not self._auto_registered:
            with self._lock:
                if not self._auto_registered:
                    self.auto_register()
        return self.available

    def names(self, part: Part | None = None) -> list[str]:
        """The registered NOSes, sorted; `part`: only those that have that part."""
        return sorted(name for name, bundle in self._loaded().items() if part is None or getattr(bundle, part))

    def bundle(self, name: str) -> NosBundle:
        try:
            return self._loaded()[name]
        except KeyError:
            raise NosRegistryError(self.unknown(name)) from None

    def unknown(self, name: str) -> str:
        """Why `name` is not a registered NOS, and what to do about it."""
        known = sorted(self.available)
        if not known:
            return (f"unknown NOS {name!r}: no NOS is registered (entry point group {self.group} is empty), so"
                    f" this install of netgen is stale or broken; {REINSTALL}")
        if self._shipped(name):
            return (f"NOS {name!r} ships with netgen ({self.shipped}.{name}) but is not registered: this install"
                    f" of netgen is stale; {REINSTALL}")
        return f"unknown NOS {name!r}; the registered ones are {', '.join(known)}"

    def _shipped(self, name: str) -> bool:
        if self.shipped is None or not _NAME.match(name):
            return False
        try:
            return importlib.util.find_spec(f"{self.shipped}.{name}") is not None
        except ImportError:
            return False

    def has_part(self, name: str, part: Part) -> bool:
        """Whether NOS `name` is registered and names that part (nothing is imported)."""
        bundle = self._loaded().get(name)
        return bundle is not None and getattr(bundle, part) is not None

    def part(self, name: str, part: Part) -> object:
        """The object NOS `name`'s bundle names for `part`, imported on first use."""
        if part not in PARTS:
            raise NosRegistryError(f"NOS {name!r}: no such part {part!r} (the parts: {', '.join(PARTS)})")
        key = (name, part)
        if key in self._parts:
            return self._parts[key]
        with self._lock:
            return self._import_part(name, part)

    def _import_part(self, name: str, part: Part) -> object:
        key = (name, part)
        if key in self._parts:
            return self._parts[key]
        path = getattr(self.bundle(name), part)
        if path is None:
            raise NosRegistryError(f"NOS {name!r} has no {part} (its bundle names none)")
        module_name, _, attribute = path.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # the bundle's own module failing: name the NOS, the part and the path
            raise NosRegistryError(f"NOS {name!r}: part {part} ({path}) cannot be imported:"
                                   f" {type(exc).__name__}: {exc}") from None
        try:
            value: object = getattr(module, attribute)
        except AttributeError:
            raise NosRegistryError(f"NOS {name!r}: part {part} ({path}): module {module_name} has no"
                                   f" {attribute!r}") from None
        self._parts[key] = value
        return value

    def wrong_part(self, name: str, part: Part, expected: str) -> NosRegistryError:
        """The error for a part that is not what its stage takes (`expected`, e.g. "an Ownership")."""
        bundle = self.available.get(name)
        path = getattr(bundle, part, None) if bundle is not None else None
        return NosRegistryError(f"NOS {name!r}: part {part} ({path}) is a {type(self.part(name, part)).__name__},"
                                f" not {expected}")


# The register netgen uses; a test may register a bundle of its own here and deregister it after.
NOS = NosRegister()

__all__ = ["ENTRY_POINT_GROUP", "NAME_PATTERN", "NOS", "PARTS", "NosBundle", "NosRegister", "NosRegistryError", "Part"]
