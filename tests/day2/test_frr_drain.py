"""The graceful drain of an FRR router (netgen/platforms/frr_drain.py) without a router: its vtysh lines
from each device's BGP plan of the small example, the same read off its rendered frr.conf, the
read-back of running configs as FRR 8.4 writes them, and repeat-safety. The lab tier runs the same
lines on real FRR (tests/lab/test_drain_traffic.py)."""

from __future__ import annotations

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.platforms.frr_drain import (
    DRAIN_SEQ,
    PREPEND_COUNT,
    DrainScope,
    drain_commands,
    drain_scope,
    drained_state,
    foreign_entries,
    scope_of_config,
    undrain_commands,
    vtysh_argv,
    with_drain,
    without_drain,
)
from netgen.platforms.routing import bgp_plan
from netgen.templating import template_env
from netgen.topology import expand
from tests.conftest import SMALL

pytestmark = pytest.mark.render

CTSW_ASN = 4200000001
PREPEND = " ".join([str(CTSW_ASN)] * 3)


@pytest.fixture(scope="module")
def ctx() -> DesignContext:
    loaded = load_fabric(SMALL)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


def rendered_frr(ctx: DesignContext, name: str) -> str:
    """The device's frr.conf as the SONiC template writes it (the lab's EOS stand-ins use the same)."""
    from netgen.nos.eos.lab import FrrView  # noqa: PLC0415  (the stand-in's view: a hostname and a plan)

    device = ctx.topology.devices[name]
    return template_env("sonic").get_template("frr.conf.j2").render(v=FrrView(name, bgp_plan(ctx, device)))


def test_a_ctsw_drains_through_both_of_its_outbound_maps(ctx):
    scope = drain_scope(bgp_plan(ctx, ctx.topology.devices["z01-ctsw01"]))
    assert scope == DrainScope(CTSW_ASN, ("RM-FABRIC-OUT", "RM-ZONE-01-OUT"))  # to its RTSWs, to the ATSWs
    assert PREPEND_COUNT == 3 and DRAIN_SEQ == 1
    assert drain_commands(scope) == [
        "configure terminal",
        "route-map RM-FABRIC-OUT permit 1", f"set as-path prepend {PREPEND}", "on-match next", "exit",
        "route-map RM-ZONE-01-OUT permit 1", f"set as-path prepend {PREPEND}", "on-match next", "exit",
        "end", "clear bgp * soft out"]
    assert undrain_commands(scope) == [
        "configure terminal", "no route-map RM-FABRIC-OUT permit 1", "no route-map RM-ZONE-01-OUT permit 1",
        "end", "clear bgp * soft out"]
    assert vtysh_argv(["configure terminal", "end"]) == ["vtysh", "-c", "configure terminal", "-c", "end"]


@pytest.mark.parametrize("name", ["z01-rtsw001", "z02-rtsw004", "z01-ctsw01", "z02-ctsw03", "atsw01"])
def test_the_rendered_config_gives_the_plan_s_scope(ctx, name):
    """The lab drains a router from the config it was started with; that is the BGP plan's scope."""
    plan = bgp_plan(ctx, ctx.topology.devices[name])
    assert scope_of_config(rendered_frr(ctx, name)) == drain_scope(plan)
    # netgen's own entries start after the drain's, so the drain's is the first of every map
    assert all(c.seq > DRAIN_SEQ for m in plan.policy.route_maps for c in m.clauses)


def test_an_rtsw_and_an_atsw_have_one_outbound_map_each(ctx):
    assert drain_scope(bgp_plan(ctx, ctx.topology.devices["z01-rtsw001"])).route_maps == ("RM-OWN-OUT",)
    assert drain_scope(bgp_plan(ctx, ctx.topology.devices["atsw01"])).route_maps == ("RM-FABRIC-OUT",)


def test_a_config_without_bgp_or_maps_has_nothing_to_drain():
    with pytest.raises(ValueError, match="no `router bgp`"):
        scope_of_config("hostname x\n")
    with pytest.raises(ValueError, match="no outbound route-map"):
        drain_commands(DrainScope(65000, ()))


def running(rendered: str, drained: tuple[str, ...] = (), entry: list[str] | None = None) -> str:
    """A running config as FRR 8.4 writes it (route-map entries in order of sequence, each closed by
    `exit` and `!`), with the drain's entry in the maps named in `drained`."""
    body = entry if entry is not None else [f" set as-path prepend {PREPEND}", " on-match next"]
    out = []
    for line in rendered.splitlines():
        if line.startswith("route-map ") and line.endswith(" permit 10") and line.split()[1] in drained:
            out += [f"route-map {line.split()[1]} permit 1", *body, "exit", "!"]
        out.append(line)
    return "\n".join(out) + "\n"


def test_the_read_back(ctx):
    conf = rendered_frr(ctx, "z01-ctsw01")
    assert drained_state(conf) is False
    assert drained_state(running(conf, ("RM-FABRIC-OUT", "RM-ZONE-01-OUT"))) is True
    # half drained, or an entry at the drain's place that is not the drain's: neither
    assert drained_state(running(conf, ("RM-FABRIC-OUT",))) is None
    two = [f" set as-path prepend {CTSW_ASN} {CTSW_ASN}", " on-match next"]
    assert drained_state(running(conf, ("RM-FABRIC-OUT", "RM-ZONE-01-OUT"), two)) is None
    assert drained_state(running(conf, ("RM-FABRIC-OUT", "RM-ZONE-01-OUT"), [f" set as-path prepend {PREPEND}"])) \
        is None
    # the order FRR writes an entry's lines in does not matter; an inbound map's entry is not read
    swapped = [" on-match next", f" set as-path prepend {PREPEND}"]
    assert drained_state(running(conf, ("RM-FABRIC-OUT", "RM-ZONE-01-OUT"), swapped)) is True
    assert drained_state(running(conf, ("RM-FABRIC-IN",))) is False
    assert drained_state("hostname x\n") is False  # nothing to drain through: no drain on it


def test_drain_twice_is_the_same_config_and_undrain_removes_exactly_it(ctx):
    """The lines are the same each time (FRR replaces an entry's set and exit policy), and undrain
    names exactly the entries drain made, by map and sequence."""
    scope = drain_scope(bgp_plan(ctx, ctx.topology.devices["z02-ctsw03"]))
    assert drain_commands(scope) == drain_commands(scope)
    made = {line for line in drain_commands(scope) if line.startswith("route-map ")}
    removed = {line.removeprefix("no ") for line in undrain_commands(scope) if line.startswith("no route-map ")}
    assert made == removed == {f"route-map {name} permit {DRAIN_SEQ}" for name in scope.route_maps}


def test_frr_conf_keeps_the_drain_once_and_gives_back_exactly_what_it_had(ctx):
    """What a drained SONiC switch boots with: its frr.conf with the drain's entries, added once however
    often, removed to the byte; and the read-back of the file says drained."""
    conf = rendered_frr(ctx, "z01-ctsw01")
    scope = scope_of_config(conf)
    drained = with_drain(conf, scope)
    assert drained_state(conf) is False and drained_state(drained) is True
    assert with_drain(drained, scope) == drained
    assert without_drain(drained, scope) == conf and without_drain(conf, scope) == conf
    for name in scope.route_maps:
        assert drained.count(f"route-map {name} permit {DRAIN_SEQ}\n") == 1


def test_an_entry_at_the_drains_sequence_that_is_not_the_drains_is_foreign(ctx):
    """An operator's own entry 1 in an outbound map: neither drain nor undrain may touch it (the
    drivers refuse); a half-made drain (one map drained, one not) is no foreign entry: it is finished."""
    conf = rendered_frr(ctx, "z01-ctsw01")
    scope = scope_of_config(conf)
    half = with_drain(conf, DrainScope(scope.asn, scope.route_maps[:1]))
    assert drained_state(half) is None and foreign_entries(half) == []
    theirs = conf + f"route-map {scope.route_maps[1]} permit {DRAIN_SEQ}\n set metric 10\nexit\n"
    assert foreign_entries(theirs) == [scope.route_maps[1]] and drained_state(theirs) is None


# --- links: some sessions of a router ----------------------------------------------------------------


def test_a_link_drain_wraps_each_session_s_inbound_map_and_calls_it(ctx):
    from netgen.platforms.frr_drain import (  # noqa: PLC0415
        LinkSession,
        link_drain_commands,
        link_scope_of_config,
    )

    conf = rendered_frr(ctx, "z01-ctsw01")
    scope = link_scope_of_config(conf, ("10.1.16.1", "fd00:0:1:1000::1"))  # z01-rtsw001's first cable
    assert scope.sessions == (LinkSession("10.1.16.1", "ipv4", "RM-ZONE-01-IN", own=False),
                              LinkSession("fd00:0:1:1000::1", "ipv6", "RM-ZONE-01-IN", own=False))
    assert link_drain_commands(scope) == [
        "configure terminal",
        f"route-map NG-LINK-DRAIN-RM-ZONE-01-IN permit {DRAIN_SEQ}", "set local-preference 50",
        "call RM-ZONE-01-IN", "exit",
        f"router bgp {CTSW_ASN}",
        "address-family ipv4 unicast", "neighbor 10.1.16.1 route-map NG-LINK-DRAIN-RM-ZONE-01-IN in",
        "exit-address-family",
        "address-family ipv6 unicast", "neighbor fd00:0:1:1000::1 route-map NG-LINK-DRAIN-RM-ZONE-01-IN in",
        "exit-address-family", "exit", "end",
        "clear bgp 10.1.16.1 soft in", "clear bgp fd00:0:1:1000::1 soft in"]
    with pytest.raises(ValueError, match=r"no BGP session with 10\.9\.9\.9"):
        link_scope_of_config(conf, ("10.9.9.9",))


def test_frr_conf_keeps_a_link_drain_beside_a_switch_drain_and_gives_back_exactly_what_it_had(ctx):
    from netgen.platforms.frr_drain import (  # noqa: PLC0415
        drained_peers,
        link_scope_of_config,
        link_undrain_commands,
        with_link_drain,
        without_link_drain,
    )

    conf = rendered_frr(ctx, "z01-ctsw01")
    first, second = (link_scope_of_config(conf, (peer,)) for peer in ("10.1.16.1", "10.1.16.3"))
    both = with_link_drain(with_link_drain(conf, first), second)
    assert drained_peers(both) == {"10.1.16.1", "10.1.16.3"} and drained_peers(conf) == frozenset()
    assert with_link_drain(both, first) == both  # repeat-safe
    assert both.count("route-map NG-LINK-DRAIN-RM-ZONE-01-IN permit") == 1  # one wrapper for both sessions
    # the switch drain does not count the wrapper as one of its maps, nor its entry as foreign
    assert drained_state(both) is False and foreign_entries(both) == []
    drained = with_drain(both, scope_of_config(both))
    assert drained_state(drained) is True and drained_peers(drained) == {"10.1.16.1", "10.1.16.3"}
    # undraining one session keeps the wrapper the other still uses; undraining both gives the file back
    assert "no route-map NG-LINK-DRAIN-RM-ZONE-01-IN" not in link_undrain_commands(first, both)
    assert without_link_drain(both, frozenset({"10.1.16.1"})) == with_link_drain(conf, second)
    assert without_link_drain(both) == conf


def test_a_session_with_its_own_inbound_map_gets_it_back(ctx):
    """An ATSW's downlinks each take routes through their own map (the CTSW's zone only)."""
    from netgen.platforms.frr_drain import (  # noqa: PLC0415
        drained_peers,
        link_scope_of_config,
        link_undrain_commands,
        with_link_drain,
        without_link_drain,
    )

    conf = rendered_frr(ctx, "atsw01")
    peer = "10.1.24.1"  # z01-ctsw01's first uplink
    (session,) = link_scope_of_config(conf, (peer,)).sessions
    assert (session.route_map, session.own) == ("RM-ZONE-01-IN", True)
    drained = with_link_drain(conf, link_scope_of_config(conf, (peer,)))
    assert f"  neighbor {peer} route-map NG-LINK-DRAIN-RM-ZONE-01-IN in" in drained.splitlines()
    assert f"  neighbor {peer} route-map RM-ZONE-01-IN in" not in drained.splitlines()
    assert drained_peers(drained) == {peer} and without_link_drain(drained) == conf
    undo = link_undrain_commands(link_scope_of_config(drained, (peer,)), drained)
    assert f"neighbor {peer} route-map RM-ZONE-01-IN in" in undo  # its own map set again, not removed
