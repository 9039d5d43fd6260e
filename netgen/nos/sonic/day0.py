"""What a replacement SONiC switch boots with (`netgen replace --day0`, netgen/day2/replace.py):
config_db.json as rendered, frr.conf with the drain (netgen/platforms/frr_drain.py: the switch comes
up drained), and ztp.json for SONiC's zero-touch provisioning (sonic-net/SONiC doc/ztp/ztp.md):

* DHCP option 67 names ztp.json (3.4 DHCP Options: `ztp_json_url`).
* Sections run in the lexical order of their names; a leading sequence number is stripped to find a
  predefined plugin, so `02-configdb-json` is the configdb-json plugin (3.1 ZTP JSON), which
  downloads `url.source` to `url.destination` and runs `config reload` (3.2.3, configdb-json).
* `01-frr-conf` runs a user-defined plugin downloaded from `plugin.url.source` (3.2.1): netgen's
  script (templates/sonic/ztp-frr-conf.sh.j2) puts frr.conf in place before the reload starts FRR.
* `halt-on-failure` stops ZTP at a failed section (3.1): a switch without its frr.conf must not go on
  to load the rest.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from netgen.platforms import frr_drain
from netgen.templating import template_env
from netgen.topology.model import Device

ZTP_FILE = "ztp.json"
FRR_SCRIPT = "install-frr-conf.sh"


@dataclass(frozen=True, slots=True)
class _ScriptView:
    device: str
    url: str  # shell-quoted


def day0_files(device: Device, files: Mapping[str, str], url: str) -> dict[str, str]:
    scope = frr_drain.scope_of_config(files["frr.conf"])
    script = template_env("sonic").get_template("ztp-frr-conf.sh.j2").render(
        z=_ScriptView(device.name, shlex.quote(f"{url}/frr.conf")))
    ztp = {"ztp": {
        "01-frr-conf": {"plugin": {"url": {"source": f"{url}/{FRR_SCRIPT}"}}, "halt-on-failure": True},
        "02-configdb-json": {"url": {"source": f"{url}/config_db.json", "destination": "/etc/sonic/config_db.json"},
                             "halt-on-failure": True},
    }}
    return {ZTP_FILE: json.dumps(ztp, indent=2) + "\n", FRR_SCRIPT: script,
            "config_db.json": files["config_db.json"], "frr.conf": frr_drain.with_drain(files["frr.conf"], scope)}


