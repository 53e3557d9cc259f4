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


def test_readme_module_table_lists_exactly_the_package():
    """README's "One turn, module by module" table names every module and folder of ``ls eris_lab``."""
    readme = (ROOT / "README.md").read_text()
    table = readme.split("| module | what it holds |", 1)[1].split("\n\n", 1)[0]
    listed = set()
    for row in table.splitlines()[2:]:
        first_cell = row.split("|")[1]
        listed |= {name.rstrip("/") for name in re.findall(r"`([^`]+)`", first_cell)}
    package = ROOT / "eris_lab"
    present = {p.name for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    present |= {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert listed == present, f"README lists {sorted(listed - present)}, misses {sorted(present - listed)}"
