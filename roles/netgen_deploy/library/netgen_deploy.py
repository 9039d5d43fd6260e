#!/usr/bin/python
# Copyright: netgen maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
# SPDX-License-Identifier: Apache-2.0
#
# Ansible's contract for the module lives here (arguments, documentation);
# the work is done by netgen's Python API (netgen/deploy/ansible_module.py), which must be
# importable by the interpreter that runs this module: the role runs it on the controller with
# `ansible_playbook_python` (the Python Ansible itself runs in, where netgen is installed).

# Ansible's layout puts DOCUMENTATION / EXAMPLES / RETURN before the imports (ansible-doc and
# ansible-test read them there), hence E402 for this file.
# ruff: noqa: E402

from __future__ import annotations

DOCUMENTATION = r"""
---
module: netgen_deploy
short_description: Push one switch's netgen-rendered config with pre-checks, commit-confirm, post-checks and rollback
description:
  - Renders the device's config from the netgen fabric (or takes it from a C(netgen render) directory),
    connects with netmiko (EOS config sessions; SONiC checkpoint + apply-patch + frr-reload) and runs
    the same pipeline as C(netgen deploy) for this one device.
  - Pre-checks (hostname/NOS/model, BGP baseline, no PFC storm, interface errors), the device's real
    diff, commit with a way back (EOS commit timer, SONiC checkpoint), post-checks (sessions that were
    up are still up, ECMP width not narrower, PFC on the lossless priority, no storm, no new errors,
    no diff left), then confirm, or roll back and fail.
  - Runs on the controller (connection local); netgen opens the SSH sessions itself.
version_added: "0.1.0"
# ansible-test takes an author as "Name (@github-handle)" or "Name (!UNKNOWN)"; netgen publishes no handle
author: netgen maintainers (!UNKNOWN)
options:
  fabric:
    description:
      - Path of the fabric file (or its directory).
      - C(deploy.yaml) beside it gives management addresses, SSH settings and the commit-confirm window.
    type: path
    required: true
  device:
    description: The device name in the fabric (the role passes C(inventory_hostname)).
    type: str
    required: true
  configs:
    description: Push the files of this C(netgen render) directory instead of rendering now.
    type: path
  lock_token:
    description:
      - The token of the change lock C(netgen rollout) holds for the whole run (not a secret); the task then
        checks that lease instead of taking the lock itself. Without it, the task takes the change lock of
        its device's zone for its own run, and fails naming the holder when another change holds it.
    type: str
  change_id:
    description: Names the EOS config session and the SONiC checkpoint; one per rollout. Default C(ansible-<timestamp>).
    type: str
  confirm_timeout:
    description: Seconds before an unconfirmed commit rolls back by itself (default from deploy.yaml).
    type: int
  post_check_timeout:
    description: Seconds the post-checks may take to pass (sessions re-establishing) before the change is rolled back.
    type: float
    default: 60
  remove_unmanaged:
    description:
      - Remove configuration outside netgen's sections and the device-owned ones, whatever deploy.yaml's
        C(ownership) policy says. Without it that policy applies, normally keep.
    type: bool
    default: false
  known_hosts:
    description: SSH host keys to verify against (default from deploy.yaml).
    type: path
  verify_host_keys:
    description: Verify SSH host keys. Never turn this off in production.
    type: bool
    default: true
  credentials_file:
    description: YAML with username and password or key_file, readable only by its owner.
    type: path
  username:
    description:
      - Login.
      - Without it, netgen reads I(credentials_file), or NETGEN_USERNAME / NETGEN_PASSWORD / NETGEN_SSH_KEY
        from the environment.
    type: str
  password:
    description: Password (from Ansible vault). Never logged or returned.
    type: str
  ssh_key_file:
    description: Private key file for the login.
    type: path
  host:
    description: Management address, instead of the one deploy.yaml gives (the role passes C(ansible_host) when set).
    type: str
  port:
    description: SSH port, instead of the one deploy.yaml gives.
    type: int
attributes:
  check_mode:
    support: full
    description: Pre-checks and the device's real diff; the staged change is discarded and nothing changes.
  diff_mode:
    support: full
    description: The device's own diff (EOS session diff; SONiC table/key/field changes and the frr.conf diff).
notes:
  - Requires netgen (C(pip install netgen-fabric)) installed in the Python that runs the module.
"""

EXAMPLES = r"""
- name: Push the intent to one switch
  netgen_deploy:
    fabric: inventory/small/fabric.yaml
    device: "{{ inventory_hostname }}"
    change_id: "cr-1234"
  connection: local
  vars:
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
"""

RETURN = r"""
status:
  description: netgen's outcome, one of unchanged, dry_run, changed, rolled_back, failed, unconfirmed.
  returned: when the device was reached
  type: str
changes:
  description: Changed lines (EOS) or fields and frr.conf lines (SONiC).
  returned: when the device was reached
  type: int
netgen:
  description: The device outcome as in C(netgen deploy --report) (stage, diff, checks, stage timings, commit window).
  returned: when the device was reached
  type: dict
"""

import sys

from ansible.module_utils.basic import AnsibleModule

ARGUMENT_SPEC = {
    "fabric": {"type": "path", "required": True},
    "device": {"type": "str", "required": True},
    "configs": {"type": "path"},
    "change_id": {"type": "str"},
    "confirm_timeout": {"type": "int"},
    "post_check_timeout": {"type": "float", "default": 60.0},
    "remove_unmanaged": {"type": "bool", "default": False},
    "known_hosts": {"type": "path"},
    "verify_host_keys": {"type": "bool", "default": True},
    "credentials_file": {"type": "path"},
    "username": {"type": "str"},
    "password": {"type": "str", "no_log": True},
    "ssh_key_file": {"type": "path", "no_log": False},
    "host": {"type": "str"},
    "port": {"type": "int"},
    "lock_token": {"type": "str"},
}


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        from netgen.deploy.ansible_module import run  # noqa: PLC0415  (a clear failure when netgen is missing)
    except ImportError as exc:
        module.fail_json(msg=f"netgen is not importable by {sys.executable} ({exc}): run the module with the Python"
                             " that has netgen installed (`pip install netgen-fabric`; the netgen_deploy role sets"
                             " ansible_python_interpreter to ansible_playbook_python)")
    result = run(dict(module.params), module.check_mode)
    if not module._diff:
        result.pop("diff", None)
    if result.get("failed"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
