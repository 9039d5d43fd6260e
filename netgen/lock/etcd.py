"""The etcd store: the change lock and the drain records in an etcd cluster every operator's
machine reaches, through etcd's v3 JSON gateway (`/v3/...`, etcd 3.4 and later; see
https://etcd.io/docs/v3.4/dev-guide/api_grpc_gateway/), over netgen's one HTTP client (bounded in
time and size, no redirect followed off the server, nothing sent anywhere else).

A lease is an etcd lease (`/v3/lease/grant` with the TTL) with one key per scope attached to it,
all created in one transaction that succeeds only when none of the keys exists (compare CREATE
revision 0): two acquirers cannot both win, whatever their clocks say. The holder keeps it alive
(`/v3/lease/keepalive`); a holder that dies stops renewing and etcd deletes its keys when the TTL
runs out, by etcd's clock alone. Releasing revokes the lease (`/v3/lease/revoke`), which deletes
its keys. Breaking deletes a scope's key: its holder finds it gone at its next renewal."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Sequence
from typing import Any

from netgen.httpclient import HttpClient, HttpLimits, ServerError
from netgen.lock.lease import Lease, LeaseLost, LockError, LockHeld
from netgen.lock.store import Records, parse_record, record_name
from netgen.safe_text import printable

# A lock request waits this long for etcd: a cluster that does not answer in that time is not
# one a change should wait on (it fails before anything on a switch moved).
ETCD_LIMITS = HttpLimits(connect_s=5.0, read_s=10.0, deadline_s=15.0, max_bytes=8 * 1024 * 1024)
MAX_KEYS = 10_000  # a fabric's records of one kind: one per switch


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _prefix_end(prefix: str) -> str:
    """The range end that covers every key starting with `prefix` (its last byte plus one)."""
    raw = prefix.encode()
    return base64.b64encode(raw[:-1] + bytes([raw[-1] + 1])).decode()


class EtcdStore:
    """One fabric identity's keys under `<prefix>/<identity>/` in the etcd cluster at `endpoint`."""

    def __init__(self, endpoint: str, identity: str, prefix: str = "/netgen") -> None:
        self.identity = record_name(identity)
        self.base = f"{prefix.rstrip('/')}/{self.identity}/"
        try:
            self.client = HttpClient(endpoint, server="etcd", option="deploy.yaml lock.endpoint",
                                     limits=ETCD_LIMITS)
        except ServerError as exc:
            raise LockError(str(exc)) from None
        self.where = f"etcd {self.client.base_text} ({self.base})"
        self._leases: dict[str, str] = {}  # token -> etcd lease ID

    def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            answer, _ = self.client.request_json("POST", path, body)
        except ServerError as exc:
            raise LockError(f"the change lock's store: {exc}") from None
        if not isinstance(answer, dict):
            raise LockError(f"{self.where}: {path} answered {printable(str(answer), 80)!r}, not an etcd answer")
        return answer

    def _key(self, kind: str, name: str) -> str:
        return f"{self.base}{record_name(kind)}/{record_name(name)}"

    def _range(self, kind: str) -> list[tuple[str, bytes]]:
        prefix = f"{self.base}{record_name(kind)}/"
        answer = self._call("/v3/kv/range", {"key": _b64(prefix), "range_end": _prefix_end(prefix),
                                             "limit": MAX_KEYS})
        return self._kvs(answer, prefix)

    def _kvs(self, answer: dict[str, Any], prefix: str) -> list[tuple[str, bytes]]:
        out = []
        for kv in answer.get("kvs") or []:
            try:
                key = base64.b64decode(kv["key"], validate=True).decode()
                value = base64.b64decode(kv.get("value", ""), validate=True)
            except (KeyError, TypeError, ValueError):
                raise LockError(f"{self.where}: an answer with a key or value that is not base64") from None
            if key.startswith(prefix):
                out.append((key.removeprefix(prefix), value))
        return out

    def _lease_of(self, kind_key: str, value: bytes) -> Lease:
        try:
            return Lease.from_dict(parse_record(value))
        except ValueError as exc:
            raise LockError(f"{self.where}: the lease at {kind_key} cannot be trusted: {exc}") from None

    def acquire(self, scopes: Sequence[str], lease: Lease, ttl_s: float) -> Lease:
        try:
            return self._acquire(scopes, lease, ttl_s)
        except LockHeld as exc:
            if not exc.holder.holder_gone():
                raise
            # a holder of this machine whose process is gone: its key removed (only if it still is that
            # lease's: compare its value), the take-over recorded, and one more try
            key = _b64(self._key("lock", exc.scope))
            value = _b64(json.dumps(exc.holder.as_dict(), sort_keys=True))
            self._call("/v3/kv/txn", {"compare": [{"target": "VALUE", "key": key, "value": value}],
                                      "success": [{"request_delete_range": {"key": key}}]})
            self.event({"event": "lease taken over", "why": "its holder's process is gone", "scope": exc.scope,
                        "old": exc.holder.as_dict(), "by": lease.as_dict()})
            return self._acquire(scopes, lease, ttl_s)

    def _acquire(self, scopes: Sequence[str], lease: Lease, ttl_s: float) -> Lease:
        granted = self._call("/v3/lease/grant", {"TTL": max(5, int(ttl_s))})
        lease_id = str(granted.get("ID", ""))
        if not lease_id.isdigit():
            raise LockError(f"{self.where}: /v3/lease/grant gave no lease ({printable(str(granted), 120)})")
        keys = [self._key("lock", scope) for scope in scopes]
        value = _b64(json.dumps(lease.as_dict(), sort_keys=True))
        answer = self._call("/v3/kv/txn", {
            "compare": [{"target": "CREATE", "key": _b64(key), "create_revision": "0"} for key in keys],
            "success": [{"request_put": {"key": _b64(key), "value": value, "lease": lease_id}} for key in keys],
            "failure": [{"request_range": {"key": _b64(key)}} for key in keys]})
        if answer.get("succeeded") is True:
            self._leases[lease.token] = lease_id
            return lease
        self._call("/v3/lease/revoke", {"ID": lease_id})
        for scope, response in zip(scopes, answer.get("responses") or [], strict=False):
            found = self._kvs(response.get("response_range") or {}, "")
            if found:
                raise LockHeld(scope, self._lease_of(self._key("lock", scope), found[0][1]))
        raise LockError(f"{self.where}: the lock transaction failed without naming a holder")

    def renew(self, scopes: Sequence[str], lease: Lease, ttl_s: float) -> Lease:
        lease_id = self._leases.get(lease.token)
        if lease_id is None:
            raise LeaseLost("this change holds no etcd lease")
        answer = self._call("/v3/lease/keepalive", {"ID": lease_id})
        inner = answer.get("result")
        result: dict[str, Any] = inner if isinstance(inner, dict) else answer
        ttl = str(result.get("TTL", "0"))
        if not ttl.isdigit() or int(ttl) <= 0:
            raise LeaseLost("the change's etcd lease ran out (etcd's TTL)")
        held = dict(self._range("lock"))
        for scope in scopes:
            value = held.get(record_name(scope))
            if value is None or self._lease_of(scope, value).token != lease.token:
                raise LeaseLost(f"the change lock of {scope} is no longer this change's (broken)")
        return lease.renewed(ttl_s)

    def release(self, scopes: Sequence[str], lease: Lease) -> None:
        lease_id = self._leases.pop(lease.token, None)
        if lease_id is not None:
            self._call("/v3/lease/revoke", {"ID": lease_id})

    def leases(self) -> tuple[dict[str, Lease], dict[str, str]]:
        found: dict[str, Lease] = {}
        skipped: dict[str, str] = {}
        for scope, value in self._range("lock"):
            try:
                found[scope] = Lease.from_dict(parse_record(value))
            except ValueError as exc:
                skipped[scope] = f"{self.base}lock/{scope}: {exc}"
        return found, skipped

    def break_lease(self, scope: str) -> Lease | None:
        key = self._key("lock", scope)
        answer = self._call("/v3/kv/deleterange", {"key": _b64(key), "prev_kv": True})
        previous = answer.get("prev_kvs") or []
        if not previous:
            return None
        try:
            return Lease.from_dict(parse_record(base64.b64decode(previous[0].get("value", ""))))
        except ValueError:
            return None

    def put_record(self, kind: str, name: str, data: dict[str, Any]) -> None:
        value = _b64(json.dumps(data, sort_keys=True, allow_nan=False))
        self._call("/v3/kv/put", {"key": _b64(self._key(kind, name)), "value": value})

    def delete_record(self, kind: str, name: str) -> None:
        self._call("/v3/kv/deleterange", {"key": _b64(self._key(kind, name))})

    def records(self, kind: str) -> Records:
        out = Records()
        for name, value in self._range(kind):
            try:
                out.found[name] = parse_record(value)
            except ValueError as exc:
                out.skipped[name] = f"{self.base}{kind}/{name}: {exc}"
        return out

    def event(self, data: dict[str, Any]) -> None:
        stamp = f"{time.time():.6f}"
        value = _b64(json.dumps({"t": float(stamp), **data}, sort_keys=True, default=str))
        self._call("/v3/kv/put", {"key": _b64(f"{self.base}events/{stamp}"), "value": value})


__all__ = ["ETCD_LIMITS", "EtcdStore"]
