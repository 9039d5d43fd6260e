"""The graceful drain of an EOS switch: the same AS-path prepend as an FRR router's
(netgen/platforms/frr_drain.py has the why), written into each `permit` entry of every outbound
route-map rather than as an entry of its own before them.

Why in each entry: a separate first entry that prepends and then goes on to the map's own entries
needs `continue`, and what EOS does with a route that no entry after a `continue` matches (permit it
with the first entry's sets, as IOS documents, or deny it, as FRR's `on-match next`) is not in a
document netgen could check: under the IOS reading the drain would announce routes the map denies.
A `set` in each permit entry changes nothing but the path length of what that entry already permits.

Syntax: `route-map NAME permit|deny SEQ` and, in the entry, `set as-path prepend ASN...`
(AVD's eos/route-maps.j2 writes a route-map entry's `set` lines so; Batfish's EOS grammar,
batfish/batfish projects/batfish/src/main/antlr4/org/batfish/vendor/arista/grammar/Legacy_routemap.g4,
`set_as_path_prepend_rm_stanza`: `as-path prepend [last-as] ASN+`), `no set as-path prepend` to
remove it. Outbound maps are the `neighbor X route-map NAME out` lines of `router bgp`
(templates/eos/router-bgp.j2). The state is read back from `show running-config` and
`show startup-config`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from netgen.platforms.frr_drain import PREPEND_COUNT

_ROUTER_BGP = re.compile(r"^router bgp (\d+)\s*$")
_OUT_MAP = re.compile(r"^\s+neighbor \S+ route-map (\S+) out\s*$")
_ENTRY = re.compile(r"^route-map (\S+) (permit|deny) (\d+)\s*$")
PREPEND = "set as-path prepend"


@dataclass(frozen=True, slots=True)
class EosDrainScope:
    """What a drain edits: the switch's ASN and each permit entry of its outbound route-maps, with
    the `set as-path prepend` line each holds now ("" when none)."""

    asn: int
    entries: tuple[tuple[str, int, str], ...]  # (route-map, sequence, its prepend line or "")

    @property
    def drain_line(self) -> str:
        return f"{PREPEND} {' '.join([str(self.asn)] * PREPEND_COUNT)}"


def scope_of(config: str) -> EosDrainScope | None:
    """The drain's scope read off an EOS config (running or startup); None without `router bgp` or
    without an outbound route-map with a permit entry."""
    asn: int | None = None
    maps: set[str] = set()
    entries: dict[tuple[str, int], str] = {}
    current: tuple[str, int] | None = None
    for line in config.splitlines():
        found = _ROUTER_BGP.match(line)
        if found and asn is None:
            asn = int(found.group(1))
        found = _OUT_MAP.match(line)
        if found:
            maps.add(found.group(1))
        header = _ENTRY.match(line)
        if header:
            current = (header.group(1), int(header.group(3))) if header.group(2) == "permit" else None
            if current is not None:
                entries[current] = ""
        elif not line.startswith(" "):
            current = None
        elif current is not None and line.strip().startswith(PREPEND):
            entries[current] = " ".join(line.split())
    kept = tuple(sorted((name, seq, prepend) for (name, seq), prepend in entries.items() if name in maps))
    if asn is None or not kept:
        return None
    return EosDrainScope(asn, kept)


def drain_state(config: str) -> bool | None:
    """True when every permit entry of every outbound route-map holds the drain's prepend, False
    when none holds a prepend or there is nothing to drain through (no `router bgp`, no outbound
    map: a switch before its first deploy), None otherwise (some do, or one holds another prepend)."""
    scope = scope_of(config)
    if scope is None:
        return False
    states = {None if prepend and prepend != scope.drain_line else bool(prepend)
              for _, _, prepend in scope.entries}
    return states.pop() if len(states) == 1 else None


def drain_lines(scope: EosDrainScope) -> list[str]:
    """The config lines that drain the switch (typed into a configure session)."""
    lines: list[str] = []
    for name, seq, _ in scope.entries:
        lines += [f"route-map {name} permit {seq}", f"   {scope.drain_line}"]
    return lines


def undrain_lines(scope: EosDrainScope) -> list[str]:
    """The config lines that remove the drain's prepend, and only it: an entry holding another
    prepend is not netgen's to remove (drain_state is None then, and undrain refuses)."""
    lines: list[str] = []
    for name, seq, prepend in scope.entries:
        if prepend == scope.drain_line:
            lines += [f"route-map {name} permit {seq}", f"   no {PREPEND}"]
    return lines


def with_drain(config: str, scope: EosDrainScope) -> str:
    """An EOS config file with the drain's prepend in each permit entry of the outbound maps (what a
    drained switch should run: the deploy's intended config with --keep-drained)."""
    wanted = {(name, seq) for name, seq, _ in scope.entries}
    out: list[str] = []
    inside = False  # in an entry that gets the prepend
    for line in config.splitlines():
        header = _ENTRY.match(line)
        if header or not line.startswith(" "):
            if inside:  # the entry ends here: its prepend goes last, as EOS shows `set` after `match`
                out.append(f"   {scope.drain_line}")
            inside = header is not None and header.group(2) == "permit" \
                and (header.group(1), int(header.group(3))) in wanted
        if inside and line.strip().startswith(PREPEND):
            continue
        out.append(line)
    if inside:
        out.append(f"   {scope.drain_line}")
    return "\n".join(out) + ("\n" if config.endswith("\n") else "")


__all__ = ["EosDrainScope", "drain_lines", "drain_state", "scope_of", "undrain_lines", "with_drain"]
