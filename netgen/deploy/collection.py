"""The netgen.fabric Ansible collection, assembled from roles/ and built by `ansible-galaxy
collection build`: the repository keeps Ansible's role layout (roles/netgen_deploy with its module in
library/), and a collection wants the module under plugins/modules and the role calling it by its
full name. Nothing is written by hand twice: the module, role and playbook are copied from roles/,
and only the two names that change in a collection are rewritten (each must be found, or the build
stops: a renamed task would otherwise leave a collection whose role cannot find its module).

The collection passes `ansible-test sanity` (tests/deploy/test_ansible_collection.py runs the tests
that need no download). Its one ignore, written for each ansible-core release netgen supports:
validate-modules wants the GPLv3 header on every module and plugin, netgen's are Apache-2.0, and
`missing-gplv3-license` is the ignore Ansible's partner-collection rules allow for that.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from netgen.resources import ROLES

COLLECTION = "netgen.fabric"
DISTRIBUTION = "netgen-fabric"  # netgen's name on PyPI (`netgen` there is another project); the command is netgen
# The ansible-core releases pyproject.toml's ansible-core requirement allows, one ignore file each
# (ansible-test reads tests/sanity/ignore-<its release>.txt).
ANSIBLE_CORE_RELEASES = ("2.16", "2.17", "2.18")
SANITY_IGNORES = ("plugins/inventory/netgen.py validate-modules:missing-gplv3-license",
                  "plugins/modules/netgen_deploy.py validate-modules:missing-gplv3-license")


class CollectionError(Exception):
    """The collection cannot be built here; the message says why (exit 2)."""


def _rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    if text.count(old) != 1:
        raise CollectionError(f"{path}: expected one {old.strip()!r} to make the collection's {new.strip()!r}")
    path.write_text(text.replace(old, new))


def ansible_galaxy() -> str:
    found = shutil.which("ansible-galaxy", path=str(Path(sys.executable).parent)) or shutil.which("ansible-galaxy")
    if found is None:
        raise CollectionError("ansible-galaxy not found beside this Python or on PATH: pip install ansible-core")
    return found


def build_collection(output: Path) -> Path:
    """Build the collection tarball into `output`; returns its path."""
    meta = yaml.safe_load((ROLES / "collection" / "galaxy.yml").read_text())
    with tempfile.TemporaryDirectory(prefix="netgen-collection-") as folder:
        stage = Path(folder) / meta["namespace"] / meta["name"]
        shutil.copytree(ROLES / "collection", stage, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (stage / "plugins" / "modules").mkdir(parents=True)
        shutil.copy(ROLES / "netgen_deploy" / "library" / "netgen_deploy.py", stage / "plugins" / "modules")
        shutil.copytree(ROLES / "netgen_deploy", stage / "roles" / "netgen_deploy",
                        ignore=shutil.ignore_patterns("library", "__pycache__", "*.pyc"))
        _rewrite(stage / "roles" / "netgen_deploy" / "tasks" / "main.yml", "\n  netgen_deploy:\n",
                 f"\n  {COLLECTION}.netgen_deploy:\n")
        (stage / "tests" / "sanity").mkdir(parents=True)
        for release in ANSIBLE_CORE_RELEASES:
            (stage / "tests" / "sanity" / f"ignore-{release}.txt").write_text("".join(f"{line}\n"
                                                                                     for line in SANITY_IGNORES))
        (stage / "playbooks").mkdir()
        shutil.copy(ROLES / "rollout.yml", stage / "playbooks" / "rollout.yml")
        _rewrite(stage / "playbooks" / "rollout.yml", "- role: netgen_deploy\n",
                 f"- role: {COLLECTION}.netgen_deploy\n")
        output.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([ansible_galaxy(), "collection", "build", str(stage), "--output-path", str(output),
                               "--force"], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            why = (done.stderr or done.stdout).strip()[-500:]
            raise CollectionError(f"ansible-galaxy collection build failed: {why}")
    return output / f"{meta['namespace']}-{meta['name']}-{meta['version']}.tar.gz"


__all__ = ["ANSIBLE_CORE_RELEASES", "COLLECTION", "DISTRIBUTION", "SANITY_IGNORES", "CollectionError", "ansible_galaxy",
           "build_collection"]
