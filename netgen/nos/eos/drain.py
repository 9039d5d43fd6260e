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

from netgen.platforms.frr_drain import (
    LINK_LOCAL_PREF,
    LINK_WRAPPER_PREFIX,
    PREPEND_COUNT,
    BgpLines,
    session_layout,
)

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
        if found and not found.group(1).startswith(LINK_WRAPPER_PREFIX):  # a link drain's copy: see below
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




# --- links: some sessions of a switch ------------------------------------------------------------
# A link drain (`netgen drain A:p--B:q`) lowers the local preference of the routes each end learns
# over the link's sessions (netgen/platforms/frr_drain.py has the why: inbound, each end for its own
# traffic). On EOS each drained session takes routes through a route-map of its own in its address
# family: a copy of the map it used (its own, or its peer group's), each permit entry with
# `set local-preference` (EOS has no `call` netgen could check, see the top of this module; AVD's
# eos/route-maps.j2 writes `set local-preference N` in an entry). The copy is named
# NG-LINK-DRAIN-<map> (frr_drain.LINK_WRAPPER_PREFIX); the switch drain leaves the copies alone.
# A neighbour's own inbound route-map overriding its peer group's is the peer-group rule netgen
# relies on already (templates/eos/router-bgp.j2 gives the ATSWs' sessions their own inbound maps).

EOS_LINES = BgpLines(re.compile(r"^   neighbor (\S+) peer group (\S+)\s*$"),
                     re.compile(r"^   address-family (ipv4|ipv6)\s*$"),
                     re.compile(r"^      neighbor (\S+) route-map (\S+) in\s*$"))
LOCAL_PREF = f"set local-preference {LINK_LOCAL_PREF}"


def _wrapper(route_map: str) -> str:
    return LINK_WRAPPER_PREFIX + route_map


def _asn(config: str) -> int | None:
    return next((int(m.group(1)) for m in map(_ROUTER_BGP.match, config.splitlines()) if m), None)


def _bgp_layout(config: str) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """(peer -> its peer group), ((address family, neighbor or group) -> its inbound route-map)."""
    return session_layout(config, EOS_LINES)


def _map_entries(config: str) -> dict[str, list[tuple[str, list[str]]]]:
    """route-map name -> its entries in order: (header, body lines as written)."""
    maps: dict[str, list[tuple[str, list[str]]]] = {}
    current: list[str] | None = None
    for line in config.splitlines():
        header = _ENTRY.match(line)
        if header:
            current = []
            maps.setdefault(header.group(1), []).append((line, current))
        elif not line.startswith(" "):
            current = None
        elif current is not None:
            current.append(line)
    return maps


def _copy_lines(config: str, route_map: str) -> list[str]:
    """The drain's copy of `route_map`: its entries, each permit entry with the lower local preference
    (in place of any it sets)."""
    lines: list[str] = []
    for header, body in _map_entries(config).get(route_map, []):
        found = _ENTRY.match(header)
        assert found is not None
        lines.append(f"route-map {_wrapper(route_map)} {found.group(2)} {found.group(3)}")
        lines += [b for b in body if not b.strip().startswith("set local-preference")]
        if found.group(2) == "permit":
            lines.append(f"   {LOCAL_PREF}")
    return lines


@dataclass(frozen=True, slots=True)
class EosLinkSession:
    """One session a link drain edits: peer, address family, the inbound map it uses (its own or its
    group's), and whether that map is its own line."""

    peer: str
    family: str
    route_map: str
    own: bool

    @property
    def wrapper(self) -> str:
        return _wrapper(self.route_map)


def session_scope(config: str, peers: tuple[str, ...]) -> tuple[int, tuple[EosLinkSession, ...]]:
    """(ASN, the sessions); ValueError naming a peer that is no session of the switch, or that takes
    routes through no route-map."""
    asn = _asn(config)
    if asn is None:
        raise ValueError("no `router bgp` to drain")
    groups, in_maps = _bgp_layout(config)
    entries = _map_entries(config)
    sessions = []
    for peer in peers:
        if peer not in groups:
            raise ValueError(f"no BGP session with {peer}")
        family = "ipv6" if ":" in peer else "ipv4"
        own, group_map = in_maps.get((family, peer)), in_maps.get((family, groups[peer]))
        if own is not None and own.startswith(LINK_WRAPPER_PREFIX):
            called = own.removeprefix(LINK_WRAPPER_PREFIX)
            session = EosLinkSession(peer, family, called, group_map != called)
        elif own is not None:
            session = EosLinkSession(peer, family, own, True)
        elif group_map is not None:
            session = EosLinkSession(peer, family, group_map, False)
        else:
            raise ValueError(f"neither {peer} nor its peer group {groups[peer]} takes routes through a route-map"
                             f" in {family}")
        if not entries.get(session.route_map):
            raise ValueError(f"route-map {session.route_map} of {peer} has no entry")
        sessions.append(session)
    return asn, tuple(sessions)


def drained_peers(config: str) -> frozenset[str]:
    """The sessions the config holds link-drained: each takes routes through the drain's copy of the
    map it used, and the copy is exactly that map with the lower local preference."""
    groups, in_maps = _bgp_layout(config)
    entries = _map_entries(config)
    drained = set()
    for (_, peer), name in in_maps.items():
        if not name.startswith(LINK_WRAPPER_PREFIX) or peer not in groups:
            continue
        original = name.removeprefix(LINK_WRAPPER_PREFIX)
        held = [line for header, body in entries.get(name, []) for line in (header, *body)]
        if entries.get(original) and held == _copy_lines(config, original):
            drained.add(peer)
    return frozenset(drained)


def _af_lines(asn: int, by_family: dict[str, list[str]]) -> list[str]:
    lines = [f"router bgp {asn}"]
    for family in ("ipv4", "ipv6"):
        if by_family.get(family):
            lines += [f"   address-family {family}", *by_family[family]]
    return lines


def session_drain_lines(config: str, peers: tuple[str, ...]) -> list[str]:
    """The config lines that link-drain `peers` (typed into a configure session)."""
    asn, sessions = session_scope(config, peers)
    lines: list[str] = []
    for route_map in sorted({s.route_map for s in sessions}):
        lines += [f"no route-map {_wrapper(route_map)}", *_copy_lines(config, route_map)]
    by_family: dict[str, list[str]] = {}
    for s in sessions:
        by_family.setdefault(s.family, []).append(f"      neighbor {s.peer} route-map {s.wrapper} in")
    return lines + _af_lines(asn, by_family)


def session_undrain_lines(config: str, peers: tuple[str, ...]) -> list[str]:
    """The config lines that give each drained session of `peers` its map back (its own line set
    again, or the copy's line removed when it used its group's), and remove each copy no other
    session uses."""
    asn = _asn(config)
    drained = drained_peers(config) | {peer for (_, peer), name in _bgp_layout(config)[1].items()
                                      if name.startswith(LINK_WRAPPER_PREFIX)}
    leaving = tuple(peer for peer in peers if peer in drained)
    if asn is None or not leaving:
        return []
    _, sessions = session_scope(config, leaving)
    by_family: dict[str, list[str]] = {}
    for s in sessions:
        line = f"      neighbor {s.peer} route-map {s.route_map} in" if s.own else \
            f"      no neighbor {s.peer} route-map {s.wrapper} in"
        by_family.setdefault(s.family, []).append(line)
    _, in_maps = _bgp_layout(config)
    still = {name for (_, peer), name in in_maps.items()
             if peer not in leaving and name.startswith(LINK_WRAPPER_PREFIX)}
    return _af_lines(asn, by_family) + [f"no route-map {w}" for w in sorted({s.wrapper for s in sessions} - still)]


def with_session_drain(config: str, peers: tuple[str, ...]) -> str:
    """A rendered EOS config with `peers` link-drained, laid out as the switch shows it after a drain:
    a session's own line replaced in place, else its line last in its address family; the copies
    after the last route-map entry."""
    _, sessions = session_scope(config, peers)
    copies = [line for rm in sorted({s.route_map for s in sessions}) for line in _copy_lines(config, rm)]
    replace = {f"      neighbor {s.peer} route-map {s.route_map} in":
               f"      neighbor {s.peer} route-map {s.wrapper} in" for s in sessions if s.own}
    wanted = {family: [f"      neighbor {s.peer} route-map {s.wrapper} in" for s in sessions
                       if s.family == family and not s.own] for family in ("ipv4", "ipv6")}
    out: list[str] = []
    family: str | None = None
    for line in config.splitlines():
        if family is not None and not line.startswith("      "):
            out += wanted.pop(family)
            family = None
        found = EOS_LINES.family.match(line)
        if found:
            family = found.group(1)
        out.append(replace.pop(line, line))
    if family is not None:
        out += wanted.pop(family)
    if replace or any(wanted.values()):
        raise ValueError("no address-family block for the drained sessions")
    at = max((i for i, line in enumerate(out) if _ENTRY.match(line)), default=len(out) - 1) + 1
    while at < len(out) and out[at].startswith(" "):
        at += 1
    out[at:at] = copies
    return "\n".join(out) + ("\n" if config.endswith("\n") else "")


def without_session_drains(config: str) -> str:
    """`config` with every netgen link drain taken out, as its undrain would leave it: each drained
    session's own line given its map back in place (a group's user loses the copy's line), and each
    copy no other session uses removed. Only exact copies count (drained_peers): a hand-edited copy
    stays, so a difference netgen did not make never disappears from a comparison."""
    drained = drained_peers(config)
    if not drained:
        return config
    _, sessions = session_scope(config, tuple(sorted(drained)))
    replace = {f"      neighbor {s.peer} route-map {s.wrapper} in":
               f"      neighbor {s.peer} route-map {s.route_map} in" if s.own else None for s in sessions}
    _, in_maps = _bgp_layout(config)
    still = {name for (_, peer), name in in_maps.items() if peer not in drained}
    gone = {s.wrapper for s in sessions} - still
    out: list[str] = []
    skipping = False
    for line in config.splitlines():
        header = _ENTRY.match(line)
        if header or not line.startswith(" "):
            skipping = header is not None and header.group(1) in gone
        if skipping:
            continue
        if line in replace:
            kept = replace[line]
            if kept is not None:
                out.append(kept)
            continue
        out.append(line)
    return "\n".join(out) + ("\n" if config.endswith("\n") else "")


__all__ = ["EosDrainScope", "EosLinkSession", "drain_lines", "drain_state", "drained_peers", "scope_of",
           "session_drain_lines", "session_scope", "session_undrain_lines", "undrain_lines", "with_drain",
           "with_session_drain", "without_session_drains"]
