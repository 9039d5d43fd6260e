"""DIR's first look, taken ahead: a forked child looks at DIR (inspection.py: every listed file
read and hashed, but those the manifest vouches for by their inode, size and mtime) and stages
the devices it holds while the render's process expands and checks the fabric, then hands that look
to the render's stage (staging.py)."""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

from netgen.output.files import beside, hard_link
from netgen.output.inspection import Survey, check_replaceable, lstat_or_none, output_path
from netgen.output.manifest import MARKER


@dataclass(frozen=True, slots=True)
class _Look:
    """DIR's first look, taken ahead (InspectionAhead.take): its lstat and survey, and the staging
    directory already holding links to the files of `prestaged` devices (None: not staged ahead)."""

    before: os.stat_result | None
    survey: Survey
    staging: Path | None
    prestaged: frozenset[str]


def _prestage(output: Path, staging: Path, survey: Survey) -> frozenset[str]:
    """Every device of DIR whose listed files the survey verified, linked into the staging directory
    the way `keep` links them: the devices a warm render keeps are there before it knows which. A
    device counts only if each link is the very file the survey read (not one put in its place
    since); where the file system has no links, `keep` copies the kept devices' files instead."""
    marker = survey.marker
    if marker is None or not marker.trusted:  # nothing of DIR is kept: every device is written again
        return frozenset()
    files: dict[str, list[str]] = {}
    for name in marker.files:
        files.setdefault(name.split("/", 1)[0], []).append(name)
    staged = []
    for device in sorted(device for device, names in files.items() if all(n in survey.files for n in names)):
        os.mkdir(staging / device)
        linked = [hard_link(output / name, staging / name) for name in files[device]]
        if not all(linked):  # no links on this file system: nothing more to stage
            shutil.rmtree(staging / device)
            break
        if any(os.lstat(staging / name).st_ino != survey.files[name][0] for name in files[device]):
            shutil.rmtree(staging / device)  # a file put in place of the one read: `keep` decides
            continue
        staged.append(device)
    return frozenset(staged)


class InspectionAhead:
    """The first look at DIR (check_replaceable; `verify`: every listed file read and hashed) taken by a
    forked child while this process expands and checks the fabric, then handed to the render's
    stage as its own first look (the swap's second look still checks DIR again).
    When DIR holds a render, the child also builds the new DIR's staging directory ahead: a
    directory per device linking its files, as `keep` would (thousands of mkdir and links on meta-24k;
    figures in docs/developer/benchmarks.md), on the core the expansion leaves free; the render then
    clears the devices it writes again and drops those it no longer has.
    The child answers only when DIR may be replaced; on a refusal, an OS error or a failed child the
    stage inspects DIR itself, as without it, to report what it finds, and the staging directory
    goes. `start` gives None where processes cannot be forked (no fork, or fork refused: the render
    then takes the first look itself). A daemonic process may fork this way: only multiprocessing's
    own children are refused to it."""

    def __init__(self, output: Path, pid: int, fd: int, staging: Path | None) -> None:
        self.output, self._pid, self._fd, self._staging = output, pid, fd, staging

    @classmethod
    def start(cls, output: Path, *, verify: bool = False) -> InspectionAhead | None:
        if not hasattr(os, "fork"):
            return None
        path = output_path(output)
        staging = None
        with contextlib.suppress(OSError):  # made here, so that whatever becomes of the child it is removed
            if path.name and not os.path.islink(path) and lstat_or_none(path / MARKER) is not None:
                staging = beside(path, "new")
        try:
            read, write = os.pipe()
        except OSError:
            _drop(staging)
            return None
        try:
            pid = os.fork()
        except OSError:  # EAGAIN, ENOMEM: the render looks at DIR itself
            os.close(read)
            os.close(write)
            _drop(staging)
            return None
        if pid == 0:  # the child: answer through the pipe, then leave without running anything else
            try:
                os.close(read)
                survey = Survey()
                before = check_replaceable(path, survey, verify=verify)
                prestaged = _prestage(path, staging, survey) if staging is not None else frozenset()
                answer = pickle.dumps(_Look(before, survey, staging, prestaged), protocol=5)
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(answer)
            finally:
                os._exit(0)
        os.close(write)
        return cls(path, pid, read, staging)

    def take(self, output: Path) -> _Look | None:
        """DIR's first look, or None (inspect DIR here) if the child has none or `output` is not the
        DIR it looked at."""
        if self._fd < 0:
            return None
        fd, self._fd = self._fd, -1
        try:
            with os.fdopen(fd, "rb") as pipe:
                answer = pipe.read()
            looked = pickle.loads(answer) if answer and output == self.output else None
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError):
            looked = None
        finally:
            self._reap(stop=False)
        if isinstance(looked, _Look) and looked.staging == self._staging:
            self._staging = None  # the stage's now
            return looked
        self._drop_staging()
        return None

    def close(self) -> None:
        """Stop the child if its answer was not taken (the command ends without rendering), and
        remove the staging directory it was building."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
            self._reap(stop=True)
        self._drop_staging()

    def _drop_staging(self) -> None:
        _drop(self._staging)
        self._staging = None

    def _reap(self, stop: bool) -> None:
        if self._pid <= 0:
            return
        with contextlib.suppress(OSError):
            if stop:
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        self._pid = -1  # reaped: the number may be another process's now


def _drop(staging: Path | None) -> None:
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
