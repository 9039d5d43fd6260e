"""Faults injected into the lab's SONiC stand-in (netgen/nos/sonic/lab_shim.py), for the SONiC deploy
tests. This file has two sides:

* inside the lab node, it is the stand-in's hooks file: a lab started with
  `endpoints.start_management(..., shim_hooks=HOOKS)` loads it in every stand-in command and calls
  the functions below at the points lab_shim.py's docstring names. Each acts only when its fault is
  armed, as a flag file under the node's `/etc/sonic/faults/`. Only what the stand-in needs is
  imported at the top: this runs in every command on the node.
* on the host, `inject_fault` / `clear_faults` write and remove those flag files.

The faults:

* `apply-fail-after` holding N: the next apply-patch / replace / rollback fails after its N-th
  change was written (one-shot: the file is removed when it fires).
* `pfc-storm` holding queue names (`Ethernet0:3`, one a line; empty = the first PFC-enabled
  queue): `pfcwd show stats` reports them stormed and `--check-storm` exits 1.
* `drop-before-apply` / `drop-after-apply`: the next apply-patch / replace / rollback kills its
  SSH session (the login shell) before / after writing its changes: a dropped connection
  (one-shot).
* `slow` holding seconds: every command waits that long first (a slow control plane).
* `drop-after-frr-reload`: the next `docker exec bgp ...` (frr-reload.py) runs, then the SSH
  session dies (one-shot).
* `drop-before-disarm` / `drop-after-disarm`: every `systemctl stop` (disarming a timer) kills its
  SSH session before / after it stops the timer, for as long as the flag is there: a confirm whose
  answer is lost every time, never reaching the switch or reaching it.
* `save-fail`: every `config save` fails (the file cannot be written), for as long as the flag is there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from netgen.nos.sonic import lab_shim

if TYPE_CHECKING:
    from netgen.lab.netns import NetnsBackend

HOOKS = Path(__file__).resolve()  # start_management(shim_hooks=HOOKS)
FAULTS_DIR = "faults"  # under the node's /etc/sonic
APPLY_FAIL_AFTER = "apply-fail-after"
PFC_STORM = "pfc-storm"
DROP_BEFORE_APPLY = "drop-before-apply"  # one-shot: the SSH session dies before a change applies
DROP_AFTER_APPLY = "drop-after-apply"  # one-shot: ... after the change is applied
SLOW = "slow"  # seconds every command waits before it runs (a slow control plane)
DROP_AFTER_FRR_RELOAD = "drop-after-frr-reload"  # one-shot: after the `docker exec` stand-in's command
DROP_BEFORE_DISARM = "drop-before-disarm"  # every time: `systemctl stop` kills its session first
DROP_AFTER_DISARM = "drop-after-disarm"  # every time: ... after stopping the timer
SAVE_FAIL = "save-fail"  # every time: `config save` cannot write the file
FAULTS = (APPLY_FAIL_AFTER, PFC_STORM, DROP_BEFORE_APPLY, DROP_AFTER_APPLY, SLOW, DROP_AFTER_FRR_RELOAD,
          DROP_BEFORE_DISARM, DROP_AFTER_DISARM, SAVE_FAIL)


# --- the host side ---------------------------------------------------------------------------------


def inject_fault(backend: NetnsBackend, node: str, fault: str, value: str = "") -> None:
    """Arm a fault on a SONiC node of a lab whose management was started with these hooks: `fault`
    and `value` as the module docstring lists them."""
    from netgen.lab.backend import LabError  # noqa: PLC0415  (the node side loads this file: kept light)
    from netgen.lab.endpoints import node_shim_dir  # noqa: PLC0415

    if fault not in FAULTS:
        raise LabError(f"unknown fault {fault!r}; choose from {', '.join(FAULTS)}")
    folder = node_shim_dir(backend, node)
    if not folder.is_dir():
        raise LabError(f"{node} has no SONiC stand-in (is management started, and is it a SONiC node?)")
    hooks = lab_shim.read_json(folder / lab_shim.DEVICE_FILE).get(lab_shim.HOOKS_FACT)
    if hooks != str(HOOKS):
        raise LabError(f"{node}: its stand-in calls no fault hooks; start_management(..., shim_hooks=HOOKS)")
    (folder / FAULTS_DIR).mkdir(exist_ok=True)
    (folder / FAULTS_DIR / fault).write_text(value)


def clear_faults(backend: NetnsBackend, node: str) -> None:
    from netgen.lab.endpoints import node_shim_dir  # noqa: PLC0415  (the node side loads this file: kept light)

    for fault in FAULTS:
        (node_shim_dir(backend, node) / FAULTS_DIR / fault).unlink(missing_ok=True)


# --- the node side: the stand-in's hooks ----------------------------------------------------------------


def _flag(fault: str) -> Path:
    return lab_shim.etc() / FAULTS_DIR / fault


def _drop_if(fault: str, *, every_time: bool = False) -> None:
    """Connection-drop faults: kill this SSH session's login shell (the session leader), which
    closes the channel as a dropped connection would. One-shot (the flag goes first) unless
    `every_time`."""
    flag = _flag(fault)
    if flag.exists():
        if not every_time:
            flag.unlink(missing_ok=True)
        sys.stdout.flush()
        os.kill(os.getsid(0), signal.SIGKILL)
        time.sleep(5)  # never reached in practice: the session is gone


def before_command(program: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        time.sleep(float(_flag(SLOW).read_text().strip() or 0))


def before_apply() -> None:
    _drop_if(DROP_BEFORE_APPLY)


def before_write(number: int, count: int) -> str | None:
    try:
        text = _flag(APPLY_FAIL_AFTER).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    limit = int(text) if text.isdigit() else 0
    if number <= limit:
        return None
    _flag(APPLY_FAIL_AFTER).unlink(missing_ok=True)  # one-shot
    done = number - 1
    return (f"Failed to apply change {number} of {count}: ConfigDB did not take it (netgen lab fault"
            f" {APPLY_FAIL_AFTER}={limit}); the {done} change{'s' if done != 1 else ''} before it stay applied")


def after_apply() -> None:
    _drop_if(DROP_AFTER_APPLY)


def before_disarm() -> None:
    _drop_if(DROP_BEFORE_DISARM, every_time=True)


def after_disarm() -> None:
    _drop_if(DROP_AFTER_DISARM, every_time=True)  # its answer is lost, whatever it was


def after_docker_exec() -> None:
    _drop_if(DROP_AFTER_FRR_RELOAD)


def before_save(path: Path) -> str | None:
    if not _flag(SAVE_FAIL).exists():
        return None
    return f"/bin/sh: 1: cannot create {path}: No space left on device (netgen lab fault {SAVE_FAIL})"


def stormed(queues: Sequence[str]) -> list[str]:
    try:
        listed = [line.strip() for line in _flag(PFC_STORM).read_text(encoding="utf-8").splitlines() if line.strip()]
    except OSError:
        return []
    return listed or list(queues[:1])
