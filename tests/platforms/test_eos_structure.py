"""The EOS shape checker itself: it must reject each malformed shape (or it guards nothing)."""

from __future__ import annotations

import pytest

from netgen.platforms.eos.structure import check_eos_config

pytestmark = pytest.mark.render

GOOD = """hostname leaf1
!
interface Ethernet1/1
   description z01-ctsw01:Ethernet3/1/1
   no switchport
   ip address 10.1.16.1/31
!
qos profile ROCE
   qos trust dscp
   uc-tx-queue 3
      no priority
!
router bgp 65000
   neighbor UPLINK peer group
   !
   address-family ipv4
      neighbor UPLINK activate
!
end
"""


def test_a_well_formed_config_passes():
    assert check_eos_config(GOOD) == []


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        (GOOD.replace("end\n", ""), "must end with 'end'"),
        (GOOD.replace("   no switchport", "  no switchport"), "not a multiple of 3"),
        (GOOD.replace("   uc-tx-queue 3\n      no priority", "   uc-tx-queue 3\n         no priority"), "deeper than"),
        (GOOD.replace("hostname leaf1\n!", "hostname leaf1\n\n!"), "empty line"),
        (GOOD.replace("!\nend", "!\ninterface Ethernet1/1\n   shutdown\n!\nend"), "duplicate top-level line"),
        (GOOD.replace("   no switchport", "   no switchport \t"), "trailing whitespace"),
        (GOOD.replace("hostname leaf1", "end\nhostname leaf1"), "'end' before the end"),
        (GOOD.replace("description z01", "description z\x1b[31m01"), "control character"),
    ],
    ids=["no-end", "odd-indent", "orphan-submode", "empty-line", "duplicate-block", "trailing-space",
         "early-end", "control-char"],
)
def test_each_malformed_shape_is_reported(broken, expected):
    assert any(expected in problem for problem in check_eos_config(broken)), check_eos_config(broken)
