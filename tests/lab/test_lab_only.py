"""The lab's own settings (netgen/lab/lab_only.py): what it runs beyond the rendered configs, from
the plan alone. Render tier: no lab is built."""

from __future__ import annotations

from pathlib import Path

from netgen.lab.lab_only import BFD_PACKETS_PER_S, ZEBRA_SETTING, bfd_profiles, lab_only

SMALL = Path(__file__).resolve().parents[2] / "inventory" / "small"


def test_a_lab_of_few_sessions_runs_the_rendered_bfd_timers(plan):
    few = plan.model_copy(update={"sessions": plan.sessions[:150]})
    settings = lab_only(few)
    assert settings.bfd_floor_ms == 0 and settings.bfd_sessions == 150
    rtsw = plan.routers("rtsw")[0]
    assert bfd_profiles(rtsw.frr_conf or "") == {"netgen": {"receive": 300, "transmit": 300}}
    assert settings.frr_lines(rtsw) == [ZEBRA_SETTING]
    assert (settings.lldp_interval_s, settings.lldp_hold) == (1, 30)
    assert not settings.hold_build  # 18 routers start with their cables up
    said = settings.describe(few)
    assert len(said) == 3 and said[0].startswith("zebra: ") and not any("BFD" in line for line in said)
    assert said[1].startswith("FRR daemons start with MALLOC_MMAP_THRESHOLD_=131072 ")


def test_the_small_example_whole_runs_bfd_at_600_ms(plan):
    # 288 sessions, both ends: 576 packets a second at 1 s, within 1,000 a second from 576 ms
    settings = lab_only(plan)
    assert settings.bfd_sessions == len(plan.sessions) == 288 and settings.bfd_floor_ms == 600


def test_a_wide_lab_raises_every_bfd_profile_to_one_floor_and_says_so(plan):
    # a zone's worth of sessions: 3,072 (meta-24k zone 1 whole)
    wide = plan.model_copy(update={"sessions": (plan.sessions * 11)[:3072],
                                   "links": (plan.links * 22)[:3264]})
    settings = lab_only(wide)
    # both ends of 3,072 sessions within the budget: 2 x 3072 / 1000 s = 6.14 s, rounded up to 100 ms
    assert BFD_PACKETS_PER_S == 1000 and settings.bfd_floor_ms == 6200
    for node in wide.routers():
        lines = settings.frr_lines(node)
        assert lines == [ZEBRA_SETTING, "bfd", " profile netgen", "  transmit-interval 6200",
                         "  receive-interval 6200", " exit", "exit"], node.name
        # the rendered config itself is untouched
        assert "transmit-interval 300" in (node.frr_conf or "")
    said = settings.describe(wide)
    bfd = [line for line in said if line.startswith("BFD profile netgen")]
    assert bfd and all("300 ms -> 6200 ms" in line and "3072 BFD sessions" in line for line in bfd)
    assert {line.split("(")[1].split(")")[0] for line in bfd} == {"sonic", "eos"}
    # 6,528 cabled ports within 1,250 frames/s: every 6 s (5.2 rounded up), held 5 x 6 = 30 s
    assert (settings.lldp_interval_s, settings.lldp_hold, settings.cabled_ports) == (6, 5, 6528)
    assert "LLDP (the lab's lldpd): every 6 s, held 30 s (6528 cabled ports within 1250 frames/s)" in said


def test_profiles_outside_the_bfd_block_are_not_read():
    conf = ("bfd\n profile a\n  transmit-interval 100\n  receive-interval 200\n exit\n profile b\n exit\nexit\n"
            "router bgp 1\n profile c\n  transmit-interval 5\nexit\n")
    assert bfd_profiles(conf) == {"a": {"transmit": 100, "receive": 200}, "b": {}}
