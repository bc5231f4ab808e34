"""The release in one step: a version tag is built, checked and published to PyPI by trusted
publishing, with no token in the repository; the workflow valid by GitHub's schema, as
check-jsonschema vendors it."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_the_release_workflow_publishes_a_tag_without_a_token():
    from integrations.test_ci_workflows import schema_check
    path = ROOT / ".github" / "workflows" / "release.yml"
    schema_check("github-workflows", path)
    text = path.read_text(encoding="utf-8")
    flow = yaml.safe_load(text)
    triggers = flow.get("on", flow.get(True))            # YAML 1.1 reads `on` as true
    assert triggers == {"push": {"tags": ["v*"]}}
    build, publish = flow["jobs"]["build"], flow["jobs"]["publish"]
    runs = " ; ".join(step.get("run", "") for step in build["steps"])
    assert "python -m build" in runs and "twine check --strict" in runs
    assert flow["permissions"] == {"contents": "read"}
    assert publish["permissions"] == {"id-token": "write"} and publish["needs"] == "build"
    assert publish["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert "secrets." not in text and "password" not in text
