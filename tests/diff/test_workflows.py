"""The pull-request workflows split as GitHub documents for forks: the job that runs the pull
request's code has no secrets and no write token; the job that may comment never runs it."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.render

WORKFLOWS = ROOT / ".github" / "workflows"


def _load(name: str) -> tuple[dict, str]:
    text = (WORKFLOWS / name).read_text()
    data = yaml.safe_load(text)
    data["on"] = data.pop(True)  # YAML 1.1 reads the key `on` as true
    return data, text


def test_the_diff_runs_the_pull_requests_code_without_secrets_or_write_access():
    data, text = _load("netgen-diff.yml")
    assert set(data["on"]) == {"pull_request", "workflow_call"}
    assert data["on"]["workflow_call"]["inputs"]["fabric"]["type"] == "string"
    assert data["permissions"] == {"contents": "read"} and "secrets." not in text
    job = data["jobs"]["diff"]
    assert "inputs.fabric" in job["env"]["FABRIC"] and "vars.NETGEN_FABRIC" in job["env"]["FABRIC"]
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    run = "\n".join(s.get("run", "") for s in job["steps"])
    assert 'netgen diff "$FABRIC"' in run and "gh pr comment" not in run
    assert "--json-file netgen-diff/diff.json" in run  # the folded comment's full detail, in the artifact
    # the base's render kept per base commit, where the diff keeps it
    cache = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@"))
    assert "pull_request.base.sha" in cache["with"]["key"]
    assert f"--base-cache {cache['with']['path']}" in run
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in job["steps"])


def test_the_comment_job_reads_the_artifact_and_never_runs_pull_request_code():
    data, _ = _load("netgen-diff-comment.yml")
    assert data["on"] == {"workflow_run": {"workflows": ["netgen diff"], "types": ["completed"]}}
    assert data["permissions"] == {"actions": "read", "pull-requests": "write"}
    (job,) = data["jobs"].values()
    assert "workflow_run.event == 'pull_request'" in job["if"] and "conclusion == 'success'" in job["if"]
    uses = [s["uses"].split("@")[0] for s in job["steps"] if "uses" in s]
    assert uses == ["actions/download-artifact"]  # no checkout: nothing of the pull request runs
    run = "\n".join(s.get("run", "") for s in job["steps"])
    assert "pip" not in run and "netgen " not in run and "${{" not in run  # no expression inside the script
    assert "*[!0-9]*" in run and "--body-file" in run
