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
        if found and not found.group(1).startswith(LINK_WRAPPER_PREFIX):  # a link drain's: see below
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


# --- links: some sessions of a router --------------------------------------------------------------
# `netgen drain A:p--B:q` drains the sessions of one cable, at both ends, each end for its own traffic:
# the routes it learns over those sessions get a lower local preference, so BGP's best-path step 2
# (local preference, before AS-path length) takes that cable out of the router's ECMP set while the
# session, and its routes as a fallback, stay. With both ends drained no traffic enters the cable.
# Why inbound and not the switch drain's outbound prepend: a per-session outbound policy on a peer
# group member is exactly what several BGP implementations refuse or ignore (Brocade/Foundry and
# JUNOSe document it; Aruba lets the group's outbound map win), while a member's own inbound policy
# overriding its group's is the classic peer-group rule (docs/developer/drain-sources.md, "Link
# drain"). On FRR each drained session gets an inbound route-map of its own in its address family,
# a wrapper that sets the local preference and then `call`s the map the session used (its own, or
# its group's): FRR applies the wrapper's set, then the called map, whose deny still denies
# (https://docs.frrouting.org/en/latest/routemap.html, "Route Map Call Command"; lib/routemap.c
# route_map_apply_ext, frr-8.4.4). Undrain gives the session its map back; `clear bgp X soft in`
# asks the peer to re-send (route refresh) so the change applies at once.

LINK_WRAPPER_PREFIX = "NG-LINK-DRAIN-"
# Below every other path's local preference: netgen's policies set none, so every path has the default
# 100 (`bgp default local-preference`, default 100: FRR, as FRRouting/frr#20400 relies on; the
# convention of IOS and Junos, "received without a LOCAL_PREF ... as if 100"; on FRR 8.4.4 the drained
# cable's paths lose to the others: tests/deploy/test_deploy_sonic.py; EOS [unverified here]). Out of
# the ECMP set, kept as a fallback.
LINK_LOCAL_PREF = 50
LINK_TEMPLATE = "frr-link-drain.j2"


@dataclass(frozen=True, slots=True)
class LinkSession:
    """One session a link drain edits: its peer, address family, the inbound route-map it uses now
    (its own or its group's) and whether that map is its own (`neighbor PEER route-map M in`)."""

    peer: str
    afi: str
    route_map: str
    own: bool

    @property
    def wrapper(self) -> str:
        return LINK_WRAPPER_PREFIX + self.route_map


@dataclass(frozen=True, slots=True)
class LinkDrainScope:
    asn: int
    sessions: tuple[LinkSession, ...]


@dataclass(frozen=True, slots=True)
class _LinkDrainView:
    drain: bool
    asn: int
    seq: int
    local_pref: int
    wrappers: tuple[tuple[str, str], ...]  # (wrapper, the map it calls)
    families: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (afi, ((peer, the line's map), ...))
    unused: tuple[str, ...]  # wrappers no drained session uses after an undrain
    file: bool


@dataclass(frozen=True, slots=True)
class BgpLines:
    """How a NOS writes the `router bgp` lines session_layout reads: a peer's group membership, an
    address-family header, and a neighbour's (or group's) inbound route-map inside it. A family ends
    at the first line indented no deeper than its header (`exit-address-family`, `!`, the next one)."""

    member: re.Pattern[str]  # groups: peer, peer group
    family: re.Pattern[str]  # groups: ipv4|ipv6
    inbound: re.Pattern[str]  # groups: neighbour or group, route-map


FRR_LINES = BgpLines(re.compile(r"^ neighbor (\S+) peer-group (\S+)\s*$"),
                     re.compile(r"^ address-family (ipv4|ipv6) unicast\s*$"),
                     re.compile(r"^  neighbor (\S+) route-map (\S+) in\s*$"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def session_layout(config: str, lines: BgpLines = FRR_LINES) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """(peer -> its peer group), ((address family, neighbour or group) -> its inbound route-map), read
    off the first `router bgp` block of a config (it ends at the next line at column 0)."""
    groups: dict[str, str] = {}
    in_maps: dict[tuple[str, str], str] = {}
    family: tuple[str, int] | None = None  # the family and its header's indentation
    in_bgp = False
    for line in config.splitlines():
        if _ROUTER_BGP.match(line):
            in_bgp = True
            continue
        if not in_bgp:
            continue
        if line and not line.startswith(" "):
            break
        found = lines.member.match(line)
        if found:
            groups[found.group(1)] = found.group(2)
        header = lines.family.match(line)
        if header:
            family = (header.group(1), _indent(line))
            continue
        if family is not None and line.strip() and _indent(line) <= family[1]:
            family = None
        found = lines.inbound.match(line)
        if found and family is not None:
            in_maps[(family[0], found.group(1))] = found.group(2)
    return groups, in_maps


def _family(peer: str) -> str:
    return "ipv6" if ":" in peer else "ipv4"


def _session(peer: str, groups: dict[str, str], in_maps: dict[tuple[str, str], str]) -> LinkSession:
    if peer not in groups:
        raise ValueError(f"no BGP session with {peer}")
    afi = _family(peer)
    own = in_maps.get((afi, peer))
    if own is not None and own.startswith(LINK_WRAPPER_PREFIX):  # drained already: the map it wraps
        called = own.removeprefix(LINK_WRAPPER_PREFIX)
        return LinkSession(peer, afi, called, in_maps.get((afi, groups[peer])) != called)
    if own is not None:
        return LinkSession(peer, afi, own, True)
    group_map = in_maps.get((afi, groups[peer]))
    if group_map is None:
        raise ValueError(f"neither {peer} nor its peer group {groups[peer]} takes routes through a route-map in"
                         f" {afi} unicast")
    return LinkSession(peer, afi, group_map, False)


def link_scope_of_config(config: str, peers: tuple[str, ...]) -> LinkDrainScope:
    """The link drain's scope for `peers` on a router, read off its config; ValueError naming a peer
    that is not a session of it, or that takes routes through no route-map."""
    asn, _ = _bgp_of(config)
    if asn is None:
        raise ValueError("the FRR config has no `router bgp` instance to drain")
    groups, in_maps = session_layout(config)
    return LinkDrainScope(asn, tuple(_session(peer, groups, in_maps) for peer in peers))


def _link_render(scope: LinkDrainScope, drain: bool, file: bool, still_used: frozenset[str] = frozenset()) -> str:
    wrappers = tuple(sorted({(s.wrapper, s.route_map) for s in scope.sessions}))
    families = tuple((afi, tuple((s.peer, s.wrapper if drain else s.route_map) for s in scope.sessions
                                 if s.afi == afi and (drain or s.own)))
                     for afi in ("ipv4", "ipv6"))
    removed = tuple((afi, tuple((s.peer, s.wrapper) for s in scope.sessions if s.afi == afi and not s.own))
                    for afi in ("ipv4", "ipv6"))
    view = _LinkDrainView(drain, scope.asn, DRAIN_SEQ, LINK_LOCAL_PREF, wrappers,
                          tuple((afi, lines) for afi, lines in families if lines),
                          tuple(w for w, _ in wrappers if w not in still_used), file)
    return template_env(TEMPLATES).get_template(LINK_TEMPLATE).render(
        d=view, removed=tuple((afi, lines) for afi, lines in removed if lines) if not drain else ())


def link_drain_commands(scope: LinkDrainScope) -> list[str]:
    """The vtysh lines that drain the scope's sessions (one `vtysh -c` each, in order)."""
    return [line.strip() for line in _link_render(scope, True, False).splitlines() if line.strip()]


def link_undrain_commands(scope: LinkDrainScope, running_config: str) -> list[str]:
    """The vtysh lines that give each of the scope's sessions its own inbound map back (its own line
    set again, or the wrapper's removed so its group's applies); a wrapper another drained session of
    the router still uses stays."""
    leaving = {s.peer for s in scope.sessions}
    still_used = frozenset(w for peer, w in _link_drains(running_config).items() if peer not in leaving)
    return [line.strip() for line in _link_render(scope, False, False, still_used).splitlines() if line.strip()]


def _link_drains(config: str) -> dict[str, str]:
    """peer -> the wrapper it takes routes through, for every session with a link drain's route-map."""
    _, in_maps = session_layout(config)
    return {peer: rm for (_, peer), rm in in_maps.items() if rm.startswith(LINK_WRAPPER_PREFIX)}


def drained_peers(config: str) -> frozenset[str]:
    """The sessions a router's config holds link-drained: the session takes routes through a wrapper,
    and the wrapper is the drain's (the lower local preference, then a call of the map it wraps)."""
    entries = _entries(config)
    drained = set()
    for peer, wrapper in _link_drains(config).items():
        action, body = entries.get((wrapper, DRAIN_SEQ), ("", frozenset()))
        called = wrapper.removeprefix(LINK_WRAPPER_PREFIX)
        if action == "permit" and body == {f"set local-preference {LINK_LOCAL_PREF}", f"call {called}"}:
            drained.add(peer)
    return frozenset(drained)


def without_link_drain(config: str, peers: frozenset[str] | None = None) -> str:
    """An FRR config file without the link drain of `peers` (None: of every session): each session's
    own inbound line given back (or the wrapper's line removed, when it used its group's map), and
    every wrapper no remaining session uses removed."""
    drains = _link_drains(config)
    leaving = set(drains) if peers is None else set(peers) & set(drains)
    if not leaving:
        return config
    groups, in_maps = session_layout(config)
    sessions = {peer: _session(peer, groups, in_maps) for peer in leaving}
    used = {w for peer, w in drains.items() if peer not in leaving}
    swap = {f"  neighbor {peer} route-map {drains[peer]} in":
            (f"  neighbor {peer} route-map {s.route_map} in" if s.own else None) for peer, s in sessions.items()}
    headers = {f"route-map {w} permit {DRAIN_SEQ}" for w in set(drains.values()) - used}
    kept: list[str] = []
    inside = False
    for line in config.splitlines(keepends=True):
        if inside:
            if line.startswith(" "):
                continue
            inside = False
            if line.strip() == "exit":
                continue
        bare = line.rstrip("\n")
        if bare in swap:
            if swap[bare] is not None:
                kept.append(f"{swap[bare]}\n")
            continue
        if line.strip() in headers and not line.startswith(" "):
            inside = True
            continue
        kept.append(line)
    return "".join(kept)


def with_link_drain(config: str, scope: LinkDrainScope) -> str:
    """An FRR config file with the scope's sessions link-drained: a session's own inbound line
    replaced by the wrapper's, or the wrapper's line put right after its group's; the wrappers it
    needs before a closing `end`. Repeat-safe; ValueError when a session has no line to go beside."""
    if {s.peer for s in scope.sessions} <= drained_peers(config):
        return config
    text = without_link_drain(config, frozenset(s.peer for s in scope.sessions))
    groups, _ = session_layout(text)
    replace = {f"  neighbor {s.peer} route-map {s.route_map} in": f"  neighbor {s.peer} route-map {s.wrapper} in"
               for s in scope.sessions if s.own}
    after: dict[tuple[str, str, str], list[str]] = {}
    for s in scope.sessions:
        if not s.own:
            after.setdefault((s.afi, groups.get(s.peer, ""), s.route_map), []).append(
                f"  neighbor {s.peer} route-map {s.wrapper} in")
    out: list[str] = []
    family: str | None = None
    for line in text.splitlines():
        if line in replace:
            out.append(replace.pop(line))
            continue
        out.append(line)
        found = FRR_LINES.family.match(line)
        if found:
            family = found.group(1)
        elif line.strip() == "exit-address-family":
            family = None
        found = FRR_LINES.inbound.match(line)
        if found and family is not None:
            out += after.pop((family, found.group(1), found.group(2)), [])
    if replace or after:
        if replace:
            raise ValueError(f"no `{next(iter(replace)).strip()}` line to drain in place of")
        afi, group, route_map = sorted(after)[0]
        raise ValueError(f"no `neighbor {group} route-map {route_map} in` in {afi} unicast to drain beside")
    existing = {name for name, _ in _entries("\n".join(out))}
    missing_wrappers = LinkDrainScope(scope.asn, tuple(s for s in scope.sessions if s.wrapper not in existing))
    block = _link_render(missing_wrappers, True, True) if missing_wrappers.sessions else ""
    at = len(out)
    while at and not out[at - 1].strip():
        at -= 1
    if at and out[at - 1].strip() == "end":
        at -= 1
    head = "".join(f"{line}\n" for line in out[:at])
    return head + block + "".join(f"{line}\n" for line in out[at:])
