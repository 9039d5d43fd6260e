"""What one change's push is allowed to do, as every deploy path passes it down: the change's ID,
dry run or not, the commit-confirm and post-check windows, how many device failures stop the
rollout, a command's timeout, the journal, and each NOS's ownership (deploy.yaml `ownership.<nos>`,
else the NOS driver's default). Built once for the CLI and the Ansible module (change.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from netgen.deploy.driver import default_ownership
from netgen.deploy.journal import Journal
from netgen.deploy.ownership import Ownership


@dataclass(frozen=True)
class DeployOptions:
    change_id: str
    dry_run: bool = False
    confirm_timeout_s: int = 300
    post_check_timeout_s: float = 60.0
    max_failures: int = 0
    command_timeout_s: float = 120.0  # one command; a dropped session shows up as this timeout
    journal: Journal | None = None  # None: not journaled (dry runs need none)
    ownership: Mapping[str, Ownership] = field(default_factory=dict)  # per NOS; absent: the driver's default
    keep_drained: bool = False  # a drained switch gets the change with its drain kept (else it is refused)
    # raises (netgen.lock.lease.LeaseLost) once the change lock is no longer this change's: checked
    # before each device is touched and again just before its commit
    lock_check: Callable[[], None] | None = None

    def ownership_of(self, nos: str) -> Ownership:
        return self.ownership.get(nos) or default_ownership(nos)
