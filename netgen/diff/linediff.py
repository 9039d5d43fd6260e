"""A line diff whose cost follows what changed, for rendered configs of thousands of lines.

difflib's SequenceMatcher looks for the longest matching block again and again, and a switch
config repeats the same lines in every interface (`!`, `no switchport`, `mtu 9100`): an MTU change
on a 2,500-line EOS config costs it a tenth of a second, and a fabric-wide change thousands of
them. Here, as in git's patience diff, the lines found exactly once on each side anchor the match
(an interface's name, its description, its address), their longest increasing run is kept, and
each gap between two anchors is matched the same way on its own; a gap with no such line left is
handed to difflib, which is cheap on a few lines, or, past GAP_CELLS, taken as replaced whole.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Sequence

# A gap of a x b lines with no anchor goes to difflib only below this many cells: beyond it, the
# gap is reported as replaced whole rather than searched (it is then a rewrite anyway).
GAP_CELLS = 250_000

SMALL_GAP = 64  # cells of a gap first checked for any line in common at all

Opcode = tuple[str, int, int, int, int]  # as difflib: tag, a[i1:i2], b[j1:j2]


def _unique_pairs(a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int) -> list[tuple[int, int]]:
    """(i, j) for each line that occurs exactly once in a[alo:ahi] and once in b[blo:bhi], by i."""
    seen_a: dict[str, int] = {}
    for i in range(alo, ahi):
        seen_a[a[i]] = -1 if a[i] in seen_a else i
    seen_b: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        if seen_a.get(line, -1) >= 0:
            seen_b[line] = -1 if line in seen_b else j
    return sorted((seen_a[line], j) for line, j in seen_b.items() if j >= 0)


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of `pairs` (sorted by i) whose j increases too (patience sorting)."""
    tails: list[int] = []  # tails[k]: the smallest j ending a run of length k + 1
    ends: list[int] = []  # index into pairs of that run's last pair
    before = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            ends.append(index)
        else:
            tails[k], ends[k] = j, index
        before[index] = ends[k - 1] if k else -1
    run = []
    index = ends[-1] if ends else -1
    while index >= 0:
        run.append(pairs[index])
        index = before[index]
    return run[::-1]


def matching_lines(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """(i, j) of every line of `a` kept as line j of `b`, i and j increasing."""
    matched: list[tuple[int, int]] = []
    todo = [(0, len(a), 0, len(b))]
    while todo:  # a stack, not recursion: a revision's output could nest gaps deeply
        alo, ahi, blo, bhi = todo.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            matched.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            matched.append((ahi, bhi))
        if alo == ahi or blo == bhi:
            continue
        if (ahi - alo) * (bhi - blo) <= SMALL_GAP and not set(a[alo:ahi]).intersection(b[blo:bhi]):
            continue  # a line or two replaced (`mtu 9100` by `mtu 9000`): nothing to match
        anchors = _increasing(_unique_pairs(a, alo, ahi, b, blo, bhi))
        if anchors:
            i0, j0 = alo, blo
            for i, j in anchors:
                matched.append((i, j))
                todo.append((i0, i, j0, j))
                i0, j0 = i + 1, j + 1
            todo.append((i0, ahi, j0, bhi))
        elif (ahi - alo) * (bhi - blo) <= GAP_CELLS:
            matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
            for i, j, size in matcher.get_matching_blocks():
                matched += [(alo + i + k, blo + j + k) for k in range(size)]
    matched.sort()
    return matched


def opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """difflib-style opcodes ('equal', 'replace', 'delete', 'insert') turning `a` into `b`."""
    codes: list[Opcode] = []
    i0 = j0 = 0
    for i, j in [*matching_lines(a, b), (len(a), len(b))]:
        if i > i0 or j > j0:
            tag = "replace" if i > i0 and j > j0 else "delete" if i > i0 else "insert"
            codes.append((tag, i0, i, j0, j))
        if i < len(a) and j < len(b):
            if codes and codes[-1][0] == "equal":
                tag, e_i, _, e_j, _ = codes[-1]
                codes[-1] = (tag, e_i, i + 1, e_j, j + 1)
            else:
                codes.append(("equal", i, i + 1, j, j + 1))
        i0, j0 = i + 1, j + 1
    return codes
