"""Set-up files stay in step: environment.yml carries every dependency pyproject.toml declares."""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_lists_every_pyproject_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    env = (ROOT / "environment.yml").read_text()
    listed = {_name(m) for m in re.findall(r"^\s*-\s+([A-Za-z0-9_.\-\[\]]+[^\s#]*)", env, re.M)}
    assert wanted <= listed, f"missing from environment.yml: {sorted(wanted - listed)}"


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()
