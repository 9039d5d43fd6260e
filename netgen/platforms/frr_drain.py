"""The graceful drain of an FRR router (a SONiC switch running netgen's frr.conf, a lab node): its
sessions and forwarding table stay up while every neighbour stops choosing it, by an AS-path
prepend of its own ASN on every outbound route-map. What the router holds is read back from its
running config (`drained_state`).

Why a prepend, and how it is spelled (docs/developer/drain-sources.md has the sources):

* Each neighbour learns the drained router's routes with a longer AS path, so BGP's best-path
  step 4 (AS-path length; FRR's "Route Selection", https://docs.frrouting.org/en/latest/bgp.html)
  takes it out of the ECMP set while it still forwards what is in flight; no receiver needs
  anything (unlike GSHUT, RFC 8326, which only works where the receiver honours 65535:0). A prefix
  whose only path crosses the drained router keeps that path as a fallback (SONiC's TSA withdraws
  it instead: a black hole).
* The prepend is a first entry of each outbound route-map, `permit` with no match clause (it
  matches every route), `set as-path prepend` (https://docs.frrouting.org/en/latest/routemap.html,
  "Route Map Set Command") and the exit policy `on-match next` ("Route Map Exit Action Command":
  "Proceed on to the next entry in the route-map"). So the map's own entries still decide what is
  announced: a route no later entry permits ends on no match, which FRR's route_map_apply_ext
  (lib/routemap.c, frr-8.4.4) turns into deny, as without the drain. The lab checks it: each
  neighbour learns the same prefixes before and during a drain (tests/lab/test_drain_traffic.py).
* Three prepends: one already loses against every path of netgen's Clos that avoids the drained
  router (all the same length, the ECMP set); the other two keep it losing against a path that goes
  around it through the tier above and back down (an ATSW and another CTSW: two AS hops longer),
  which a spine layer with one ASN per switch or a wider import policy would offer. More only
  lengthens the fallback's path for nothing.
* Undrain removes that one entry per map, nothing else. Both are repeat-safe: FRR replaces an
  entry's set and exit policy rather than adding a second one, and removing an absent entry is no
  error. `clear bgp * soft out` re-sends every session's routes through the changed maps at once,
  rather than after bgpd's route-map delay timer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from netgen.platforms.routing import BgpPlan
from netgen.templating import template_env

PREPEND_COUNT = 3  # see the module docstring
DRAIN_SEQ = 1  # the drain entry's sequence: before netgen's own entries (10, 20, ...; platforms/policy.py)
TEMPLATES, TEMPLATE = "sonic", "frr-drain.j2"  # beside frr.conf.j2, whose route-map names it edits


@dataclass(frozen=True, slots=True)
class DrainScope:
    """What a drain edits on one router: its ASN (prepended) and its outbound route-maps."""

    asn: int
    route_maps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _DrainView:
    """What the template reads."""

    drain: bool
    route_maps: tuple[str, ...]
    seq: int
    prepend: str
    file: bool  # frr.conf's form, not vtysh lines


def drain_scope(bgp: BgpPlan) -> DrainScope:
    """The scope of a device's drain from its BGP plan: every route-map its sessions send through."""
    present = set(bgp.peer_groups)
    names = {s.route_map_out for s in bgp.policy.sessions if s.group in present}
    return DrainScope(bgp.asn, tuple(sorted(names)))


def scope_of_config(frr_conf: str) -> DrainScope:
    """The same scope read off an FRR config (the rendered frr.conf, or a running config): the
    `router bgp` ASN and every `neighbor ... route-map NAME out`. The lab drains its routers so,
    from the config each one was started with."""
    asn, maps = _bgp_of(frr_conf)
    if asn is None:
        raise ValueError("the FRR config has no `router bgp` instance to drain")
    return DrainScope(asn, tuple(sorted(maps)))


def _render(scope: DrainScope, drain: bool, file: bool) -> str:
    if not scope.route_maps:
        raise ValueError(f"AS {scope.asn}: no outbound route-map to drain through")
    view = _DrainView(drain, scope.route_maps, DRAIN_SEQ, " ".join([str(scope.asn)] * PREPEND_COUNT), file)
    return template_env(TEMPLATES).get_template(TEMPLATE).render(d=view)


def _commands(scope: DrainScope, drain: bool) -> list[str]:
    return [line.strip() for line in _render(scope, drain, file=False).splitlines() if line.strip()]


def drain_commands(scope: DrainScope) -> list[str]:
    """The vtysh lines that drain the router (one `vtysh -c` each, in order)."""
    return _commands(scope, drain=True)


def undrain_commands(scope: DrainScope) -> list[str]:
    """The vtysh lines that remove exactly what drain_commands added."""
    return _commands(scope, drain=False)


def without_drain(config: str, scope: DrainScope) -> str:
    """An FRR config file (frr.conf) without the drain's entries: each `route-map NAME permit
    DRAIN_SEQ` of the scope's maps, its indented lines and its closing `exit` removed; nothing else
    changes."""
    headers = {f"route-map {name} permit {DRAIN_SEQ}" for name in scope.route_maps}
    kept: list[str] = []
    inside = False
    for line in config.splitlines(keepends=True):
        if inside:
            if line.startswith(" "):
                continue
            inside = False
            if line.strip() == "exit":
                continue
        if line.strip() in headers and not line.startswith(" "):
            inside = True
            continue
        kept.append(line)
    return "".join(kept)


def with_drain(config: str, scope: DrainScope) -> str:
    """An FRR config file with the drain's entries, each once (added before a closing `end`, else
    at the end): a switch whose frr.conf holds them boots drained. Repeat-safe."""
    text = without_drain(config, scope)
    block = _render(scope, drain=True, file=True)
    lines = text.splitlines(keepends=True)
    at = len(lines)
    while at and not lines[at - 1].strip():
        at -= 1
    if at and lines[at - 1].strip() == "end":
        at -= 1
    head = "".join(lines[:at])
    if head and not head.endswith("\n"):
        head += "\n"
    return head + block + "".join(lines[at:])


def vtysh_argv(lines: list[str]) -> list[str]:
    argv = ["vtysh"]
    for line in lines:
        argv += ["-c", line]
    return argv


# --- read back ------------------------------------------------------------------------------------

_ROUTER_BGP = re.compile(r"^router bgp (\d+)\s*$")
_OUT_MAP = re.compile(r"^\s*neighbor \S+ route-map (\S+) out\s*$")
_ENTRY = re.compile(r"^route-map (\S+) (permit|deny) (\d+)\s*$")


def _bgp_of(config: str) -> tuple[int | None, set[str]]:
    asn: int | None = None
    maps: set[str] = set()
    for line in config.splitlines():
        found = _ROUTER_BGP.match(line)
        if found and asn is None:  # the default instance: the first one written
            asn = int(found.group(1))
        found = _OUT_MAP.match(line)
        if found:
            maps.add(found.group(1))
    return asn, maps


def _entries(config: str) -> dict[tuple[str, int], tuple[str, frozenset[str]]]:
    """(route-map, sequence) -> (permit|deny, its lines), as FRR writes a running config: the
    entry's header, its indented lines, then `exit` (or `!`, or the next unindented line)."""
    entries: dict[tuple[str, int], tuple[str, frozenset[str]]] = {}
    current: tuple[str, int] | None = None
    action, body = "", set[str]()
    for line in [*config.splitlines(), "!"]:
        header = _ENTRY.match(line)
        if current is not None and (header or not line.startswith(" ")):
            entries[current] = (action, frozenset(body))
            current = None
        if header:
            current, action, body = (header.group(1), int(header.group(3))), header.group(2), set()
        elif current is not None:
            body.add(" ".join(line.split()))
    return entries


def _drain_entry(asn: int) -> tuple[str, frozenset[str]]:
    return "permit", frozenset({f"set as-path prepend {' '.join([str(asn)] * PREPEND_COUNT)}", "on-match next"})


def foreign_entries(running_config: str) -> list[str]:
    """The outbound route-maps holding an entry at the drain's sequence that is not the drain's:
    neither drain nor undrain may touch those (both would replace or remove it)."""
    asn, maps = _bgp_of(running_config)
    if asn is None:
        return []
    entries = _entries(running_config)
    return sorted(name for name in maps
                  if (name, DRAIN_SEQ) in entries and entries[(name, DRAIN_SEQ)] != _drain_entry(asn))


def drained_state(running_config: str) -> bool | None:
    """What the router holds: True when every outbound route-map has the drain entry, False when
    none has it (or there is nothing to drain through: no BGP instance, no outbound route-map: a
    router with no drain on it, as a switch before its first deploy), None when neither (some have
    it; an entry at the drain's sequence that is not the drain's): not a state netgen leaves a
    router in."""
    asn, maps = _bgp_of(running_config)
    if asn is None or not maps:
        return False
    entries = _entries(running_config)
    drain_entry = _drain_entry(asn)
    states = set()
    for name in maps:
        entry = entries.get((name, DRAIN_SEQ))
        states.add(None if entry is not None and entry != drain_entry else entry is not None)
    return states.pop() if len(states) == 1 else None
