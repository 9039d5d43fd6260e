"""The EOS shape checker itself: it must reject each malformed shape (or it guards nothing)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.nos.eos.structure import check_eos_config

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


_PIECES = ["hostname leaf1", "!", "   ", "   !", "interface Ethernet1/1", "   description x", "      no priority",
           "end", "banner motd", "EOF", "  two", " ", "\t", "\xa0", "\x1c", "x\x1b", "", "   end", "router bgp 1"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.booleans())
def test_the_quick_pass_never_disagrees_with_the_line_by_line_check(lines, final_newline):
    """check_eos_config answers well formed from whole-text searches where it can (a rendered switch
    has thousands of lines): on any text, its answer is the line-by-line check's."""
    from netgen.nos.eos import structure  # noqa: PLC0415

    text = "\n".join(lines) + ("\n" if final_newline else "")
    assert check_eos_config(text) == structure._line_by_line(text)
    assert check_eos_config(text + "end\n") == structure._line_by_line(text + "end\n")


def test_the_quick_pass_answers_for_rendered_configs():
    from netgen.nos.eos import structure  # noqa: PLC0415

    assert structure._plainly_well_formed(GOOD)
