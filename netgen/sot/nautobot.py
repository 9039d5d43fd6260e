"""Nautobot as netgen's source of truth, over its REST API (API version 3.2, Nautobot 3.2; checked
against a real Nautobot in tests/sot). The standard library's HTTP client only: one request per
page or per batch of up to `BATCH` objects (Nautobot's list endpoints take a list and are
all-or-nothing per request).

How netgen's objects land (the `Wanted` kinds, netgen/sot/objects.py):
* location (location type "netgen fabric"), manufacturers, device types (model = catalog model),
  roles (for dcim.device), platforms (the NOS), namespace (the fabric's name);
* devices with status Active, their interfaces (type from the speed, MTU, description "peer:port"),
  cables (status Connected, type smf / dac-passive, length in m), container prefixes for the pools,
  network prefixes for the rack subnets, IP addresses in the fabric's namespace assigned to their
  interfaces (ip-address-to-interface);
* ASNs as the BGP models app's autonomous systems where it is installed, and always as the
  device's `netgen_asn` custom field;
* netgen's mark: the custom field `netgen_fabric` = the fabric's name, on everything netgen makes.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from netgen.sot.base import DeviceFacts, Held, SotError
from netgen.sot.objects import Wanted

BATCH = 50
PARALLEL = 4  # requests at once; a Nautobot server runs several workers
TIMEOUT_S = 120
LOCATION_TYPE = "netgen fabric"
MARK = "netgen_fabric"
ASN_FIELD = "netgen_asn"
BGP_ASN = "/api/plugins/bgp/autonomous-systems/"
MARKED = ["dcim.device", "dcim.interface", "dcim.cable", "ipam.prefix", "ipam.ipaddress"]
ENDPOINTS = {
    "location": "/api/dcim/locations/", "manufacturer": "/api/dcim/manufacturers/",
    "device_type": "/api/dcim/device-types/", "role": "/api/extras/roles/", "platform": "/api/dcim/platforms/",
    "namespace": "/api/ipam/namespaces/", "device": "/api/dcim/devices/", "interface": "/api/dcim/interfaces/",
    "cable": "/api/dcim/cables/", "prefix": "/api/ipam/prefixes/", "ip_address": "/api/ipam/ip-addresses/",
    "asn": BGP_ASN,
}


def _name(ref: object, attr: str = "name") -> str:
    return str(ref.get(attr, "")) if isinstance(ref, dict) else ""


def _value(choice: object) -> object:
    return choice.get("value") if isinstance(choice, dict) else choice


class Nautobot:
    name = "nautobot"

    def __init__(self, url: str, token: str, timeout_s: float = TIMEOUT_S) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise SotError(f"--nautobot {url!r}: give the base URL, e.g. https://nautobot.example.net")
        self.url, self._token, self.timeout = url.rstrip("/"), token, timeout_s
        self._bgp: bool | None = None
        self._ids: dict[str, dict[tuple[str, ...], str]] = {}  # kind -> key -> id, from the last read

    # --- HTTP ---------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Token {self._token}", "Accept": "application/json; version=3.2",
            "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as answer:
                text = answer.read().decode()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:600]
            if exc.code in (401, 403):
                raise SotError(f"Nautobot refused the token ({exc.code}) at {path}: set NAUTOBOT_TOKEN to a token"
                               " with write permission", exc.code) from None
            raise SotError(f"Nautobot {method} {path}: {exc.code} {detail}", exc.code) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SotError(f"Nautobot at {self.url} cannot be reached: {reason}") from None
        return json.loads(text) if text else None

    def pages(self, path: str, **query: str | list[str]) -> Iterator[dict[str, Any]]:
        params = urllib.parse.urlencode({"limit": "1000", **query}, doseq=True)
        page: str | None = f"{path}?{params}"
        while page:
            data = self.request("GET", page)
            yield from data.get("results", [])
            following = data.get("next")
            page = urllib.parse.urlsplit(following)._replace(scheme="", netloc="").geturl() if following else None

    def _batches(self, method: str, path: str, bodies: list[dict[str, Any]]) -> None:
        """Batches of one kind side by side (they do not refer to each other): Nautobot spends its
        time per object, and its workers take one request each."""
        chunks = [bodies[start:start + BATCH] for start in range(0, len(bodies), BATCH)]
        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            list(pool.map(lambda chunk: self.request(method, path, chunk), chunks))

    # --- the contract -------------------------------------------------------------------------
    def bgp(self) -> bool:
        if self._bgp is None:
            try:
                self.request("GET", f"{BGP_ASN}?limit=1")
                self._bgp = True
            except SotError as exc:
                if exc.status != 404:  # only "no such endpoint" means the app is not installed
                    raise
                self._bgp = False
        return self._bgp

    def supports(self, kind: str) -> str | None:
        if kind == "asn" and not self.bgp():
            return "the BGP models app (nautobot-bgp-models) is not installed: ASNs are the devices' netgen_asn field"
        return None

    def prepare(self, fabric: str, dry_run: bool) -> list[str]:
        """The custom fields (netgen's mark, the device ASN) and the location type."""
        done = []
        fields = {f.get("key"): f for f in self.pages("/api/extras/custom-fields/")}
        marked = [*MARKED, *(["nautobot_bgp_models.autonomoussystem"] if self.bgp() else [])]
        for key, label, kind, types in ((MARK, "netgen fabric", "text", marked),
                                        (ASN_FIELD, "netgen ASN", "integer", ["dcim.device"])):
            if key not in fields:
                done.append(f"custom field {key}")
                if not dry_run:
                    self.request("POST", "/api/extras/custom-fields/",
                                 {"key": key, "label": label, "type": kind, "content_types": types,
                                  "description": "written by netgen sot push"})
        if not list(self.pages("/api/dcim/location-types/", name=LOCATION_TYPE)):
            done.append(f"location type {LOCATION_TYPE}")
            if not dry_run:
                self.request("POST", "/api/dcim/location-types/",
                             {"name": LOCATION_TYPE, "content_types": ["dcim.device", "ipam.prefix"]})
        return done

    def held(self, fabric: str, kind: str) -> dict[tuple[str, ...], Held]:
        reader = getattr(self, f"_held_{kind}")
        found: dict[tuple[str, ...], Held] = reader(fabric)
        self._ids[kind] = {key: h.id for key, h in found.items()}
        return found

    def create(self, fabric: str, kind: str, objects: list[Wanted]) -> None:
        bodies = [self._body(fabric, w) for w in objects]
        self._batches("POST", ENDPOINTS[kind], bodies)
        self.held(fabric, kind)  # the new objects' ids, for the kinds that refer to them
        if kind == "ip_address":
            self._assign(fabric, objects)

    def update(self, fabric: str, kind: str, changes: list[tuple[Held, Wanted]]) -> None:
        bodies = [{"id": held.id, **self._body(fabric, want)} for held, want in changes]
        self._batches("PATCH", ENDPOINTS[kind], bodies)
        if kind == "ip_address":
            self._assign(fabric, [want for held, want in changes
                                  if (held.fields.get("device"), held.fields.get("interface"))
                                  != (want.fields.get("device"), want.fields.get("interface"))])

    def device_facts(self, fabric: str) -> dict[str, DeviceFacts]:
        if not self._location_exists(fabric):
            return {}
        facts = {}
        for r in self.pages(ENDPOINTS["device"], location=fabric, depth="1"):
            primary = _name(r.get("primary_ip4"), "address")
            facts[r["name"]] = DeviceFacts(management=primary.split("/")[0] or None, serial=str(r.get("serial") or ""),
                                           status=_name(r.get("status")))
        return facts

    # --- reading ------------------------------------------------------------------------------
    def _location_exists(self, fabric: str) -> bool:
        return bool(list(self.pages(ENDPOINTS["location"], name=fabric)))

    def _namespace_exists(self, fabric: str) -> bool:
        return bool(list(self.pages(ENDPOINTS["namespace"], name=fabric)))

    def _marked(self, record: Mapping[str, Any], fabric: str) -> bool:
        return (record.get("custom_fields") or {}).get(MARK) == fabric

    def _held_location(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return {(r["name"],): Held(r["id"], {"description": r.get("description", "")})
                for r in self.pages(ENDPOINTS["location"], name=fabric)}

    def _named(self, kind: str, attr: str = "name") -> dict[tuple[str, ...], Held]:
        return {(str(r[attr]),): Held(r["id"]) for r in self.pages(ENDPOINTS[kind])}

    def _held_manufacturer(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return self._named("manufacturer")

    def _held_device_type(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return self._named("device_type", "model")

    def _held_role(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return self._named("role")

    def _held_platform(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return self._named("platform")

    def _held_namespace(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return {(r["name"],): Held(r["id"]) for r in self.pages(ENDPOINTS["namespace"], name=fabric)}

    def _held_device(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._location_exists(fabric):
            return {}
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["device"], location=fabric, depth="1"):
            fields = {"device_type": _name(r.get("device_type"), "model"), "role": _name(r.get("role")),
                      "platform": _name(r.get("platform")), "location": _name(r.get("location")),
                      "asn": (r.get("custom_fields") or {}).get(ASN_FIELD)}
            held[(r["name"],)] = Held(r["id"], fields, self._marked(r, fabric))
        return held

    def _held_interface(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._location_exists(fabric):
            return {}
        devices = {i: name for (name,), i in self._ids.get("device", {}).items()}
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["interface"], location=fabric):
            device = devices.get(_name(r.get("device"), "id"), "")
            fields = {"type": _value(r.get("type")), "mtu": r.get("mtu"), "description": r.get("description", "")}
            held[(device, r["name"])] = Held(r["id"], fields, self._marked(r, fabric))
        return held

    def _held_cable(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._location_exists(fabric):
            return {}
        ends = {i: key for key, i in self._ids.get("interface", {}).items()}
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["cable"], location=fabric):
            a = ends.get(str(r.get("termination_a_id")), ("", ""))
            b = ends.get(str(r.get("termination_b_id")), ("", ""))
            fields = {"type": _value(r.get("type")) or "", "length": r.get("length")}
            mark = self._marked(r, fabric)
            # either end names the cable: netgen's A end may be the other's B end
            held[a] = Held(r["id"], {**fields, "b_device": b[0], "b_port": b[1]}, mark)
            held[b] = Held(r["id"], {**fields, "b_device": a[0], "b_port": a[1]}, mark)
        return held

    def _held_prefix(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._namespace_exists(fabric):
            return {}
        return {(r["prefix"],): Held(r["id"], {"type": _value(r.get("type")), "description": r.get("description", "")},
                                     self._marked(r, fabric))
                for r in self.pages(ENDPOINTS["prefix"], namespace=fabric)}

    def _held_ip_address(self, fabric: str) -> dict[tuple[str, ...], Held]:
        if not self._namespace_exists(fabric):
            return {}
        on: dict[str, tuple[str, ...]] = {}  # ip id -> (device, interface)
        if self._location_exists(fabric):
            interfaces = {i: key for key, i in self._ids.get("interface", {}).items()}
            for r in self.pages("/api/ipam/ip-address-to-interface/", limit="1000"):
                where = interfaces.get(_name(r.get("interface"), "id"))
                if where is not None:
                    on[_name(r.get("ip_address"), "id")] = where
        held: dict[tuple[str, ...], Held] = {}
        for r in self.pages(ENDPOINTS["ip_address"], namespace=fabric):
            device, interface = on.get(r["id"], ("", ""))
            fields: dict[str, object] = {"device": device, "interface": interface}
            if r.get("description"):
                fields["description"] = r["description"]
            held[(r["address"],)] = Held(r["id"], fields, self._marked(r, fabric))
        return held

    def _held_asn(self, fabric: str) -> dict[tuple[str, ...], Held]:
        return {(str(r["asn"]),): Held(r["id"], {"description": r.get("description", "")}, self._marked(r, fabric))
                for r in self.pages(BGP_ASN)}

    # --- writing ------------------------------------------------------------------------------
    def _body(self, fabric: str, want: Wanted) -> dict[str, Any]:
        f, mark = want.fields, {"custom_fields": {MARK: fabric}}
        kind, key = want.kind, want.key
        if kind == "location":
            return {"name": key[0], "location_type": {"name": LOCATION_TYPE}, "status": "Active", **f}
        if kind in ("manufacturer", "platform", "namespace"):
            return {"name": key[0]}
        if kind == "device_type":
            return {"model": key[0], "manufacturer": {"name": f["manufacturer"]}}
        if kind == "role":
            return {"name": key[0], "content_types": ["dcim.device"]}
        if kind == "device":
            return {"name": key[0], "device_type": {"model": f["device_type"]}, "role": {"name": f["role"]},
                    "platform": {"name": f["platform"]} if f["platform"] else None,
                    "location": {"name": f["location"]}, "status": "Active",
                    "custom_fields": {MARK: fabric, ASN_FIELD: f["asn"]}}
        if kind == "interface":
            return {"device": self._ids["device"][(key[0],)], "name": key[1], "type": f["type"],
                    "mtu": f.get("mtu"), "description": f["description"], "status": "Active", **mark}
        if kind == "cable":
            interfaces = self._ids["interface"]
            return {"termination_a_type": "dcim.interface", "termination_a_id": interfaces[key],
                    "termination_b_type": "dcim.interface",
                    "termination_b_id": interfaces[(str(f["b_device"]), str(f["b_port"]))],
                    "type": f["type"], "length": f["length"], "length_unit": "m", "status": "Connected", **mark}
        if kind == "prefix":
            return {"prefix": key[0], "namespace": {"name": fabric}, "type": f["type"], "status": "Active",
                    "description": f.get("description", ""), **mark}
        if kind == "ip_address":
            return {"address": key[0], "namespace": {"name": fabric}, "status": "Active",
                    "description": f.get("description", ""), **mark}
        if kind == "asn":
            return {"asn": int(key[0]), "status": "Active", "description": f["description"], **mark}
        raise SotError(f"netgen cannot write a {kind} to Nautobot")  # a netgen bug: every kind is above

    def _assign(self, fabric: str, objects: list[Wanted]) -> None:
        """Each address on its interface (ip-address-to-interface), once the addresses exist."""
        wanted = [w for w in objects if w.fields.get("interface")]
        if not wanted:
            return
        ips = {r["address"]: r["id"] for r in self.pages(ENDPOINTS["ip_address"], namespace=fabric)}
        interfaces = self._ids["interface"]
        self._batches("POST", "/api/ipam/ip-address-to-interface/", [
            {"ip_address": ips[w.key[0]],
             "interface": interfaces[(str(w.fields["device"]), str(w.fields["interface"]))]} for w in wanted])


__all__ = ["Nautobot"]
