"""The distributions say their license as packaging expects it now: an SPDX expression in
``project.license`` and the license text shipped through ``license-files`` (PEP 639). The TOML
table form (``license = {text = ...}``) is deprecated by setuptools, which stops building it in
2027; the metadata must name the file, and the file must be the Apache License 2.0."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = [ROOT, *sorted(p.parent for p in (ROOT / "contrib-plugins").glob("*/pyproject.toml"))]


def pyproject(project: Path) -> dict:
    return tomllib.loads((project / "pyproject.toml").read_text())


def test_license_file_is_the_apache_license_2_0():
    text = (ROOT / "LICENSE").read_text()
    assert re.match(r"\s*Apache License\s+Version 2\.0, January 2004\s", text)
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(re.findall(r"^\s*\d+\. [A-Z]", text, re.M)) >= 9  # the nine numbered sections


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name if p != ROOT else "kschedfw")
def test_pyproject_declares_an_spdx_license_and_ships_the_file(project: Path):
    """PEP 639: ``license`` is an SPDX expression string, ``license-files`` globs relative to the
    project folder (never outside it: a contrib package carries its own copy)."""
    data = pyproject(project)
    assert data["project"]["license"] == "Apache-2.0"
    assert data["project"]["license-files"] == ["LICENSE"]
    assert (project / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    # setuptools reads the SPDX string from 77 on; an older one fails on it
    assert "setuptools>=77" in data["build-system"]["requires"]
    classifiers = data["project"].get("classifiers", [])
    assert not [c for c in classifiers if c.startswith("License ::")]  # forbidden beside an expression


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name if p != ROOT else "kschedfw")
def test_wheel_metadata_names_the_license_without_deprecation_warnings(project: Path, tmp_path):
    """What a wheel build writes (setuptools' PEP 517 metadata hook, in a copy of the project):
    ``License-Expression`` and ``License-File``, and no license deprecation warning."""
    source = tmp_path / "src"
    shutil.copytree(project, source, ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build", "dist", "tests", "benchmarks", "contrib-plugins", ".*"))
    out = tmp_path / "meta"
    out.mkdir()
    hook = ("import sys; from setuptools import build_meta; "
            "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-W", "always", "-c", hook, str(out)], cwd=source,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not re.search(r"license", done.stderr, re.I), done.stderr
    metadata = (out / done.stdout.strip().splitlines()[-1] / "METADATA").read_text()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()


# ---------------------------------------------------------------------- tox: Ray only where used
def _tox_sections() -> dict[str, dict[str, str]]:
    import configparser
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    return {name: dict(parser[name]) for name in parser.sections()}


def _expand(spec: str) -> list[str]:
    """tox's generative names: ``contrib-{a,b}`` is contrib-a and contrib-b."""
    match = re.search(r"\{([^}]*)\}", spec)
    if not match:
        return [spec.strip()]
    return [name for choice in match.group(1).split(",")
            for name in _expand(spec[:match.start()] + choice.strip() + spec[match.end():])]


def _tox_env(name: str) -> dict[str, str]:
    """The env's own keys over [testenv]'s (what tox 4 reads), by exact or generative section."""
    sections = _tox_sections()
    own = next((keys for section, keys in sections.items() if section.startswith("testenv:")
                and name in _expand(section[len("testenv:"):])), {})
    return {**sections["testenv"], **own}


def _tox_list(env: str, key: str) -> set[str]:
    """A list setting's entries, with tox's factor conditions (``gpushare: ray``) applied."""
    factors = set(env.split("-"))
    entries = set()
    for line in _tox_env(env).get(key, "").splitlines():
        condition, sep, value = line.partition(":")
        if sep and re.fullmatch(r"[\w,!-]+", condition.strip()) and not value.startswith("//"):
            if not set(condition.strip().split(",")) & factors:
                continue
            line = value
        entries.update(e.strip() for e in line.split(",") if e.strip())
    return entries


def _tox_envs() -> list[str]:
    listed = _tox_sections()["tox"]["envlist"].replace("\n", " ")
    names = [n for part in re.split(r",\s*(?![^{]*\})", listed) for n in _expand(part)]
    return names + [s[len("testenv:"):] for s in _tox_sections() if s.startswith("testenv:") and "{" not in s
                    and s[len("testenv:"):] not in names]


def test_ray_is_installed_only_by_the_tox_envs_that_run_ray():
    """Ray (hundreds of MB) only where something runs on it: `py` (the sweep's Ray tests) and the
    gpushare contrib env (its --ray test); `lint` and `type` install no Ray, nor the test extra."""
    envs = _tox_envs()
    assert {"lint", "type", "py", "contrib-gpushare", "contrib-example", "fuzz", "bench"} <= set(envs)
    extras = pyproject(ROOT)["project"]["optional-dependencies"]
    pulls_ray = {name for name, requirements in extras.items() if any(re.match(r"ray\b", r) for r in requirements)}

    def installs_ray(env: str) -> bool:
        if _tox_env(env).get("skip_install", "false").strip() == "true":
            return any(re.match(r"ray\b", d) for d in _tox_list(env, "deps"))
        return bool(_tox_list(env, "extras") & pulls_ray) or any(re.match(r"ray\b", d) for d in _tox_list(env, "deps"))

    assert {env for env in envs if installs_ray(env)} == {"py", "contrib-gpushare"}
    assert not [r for r in extras["test"] if re.match(r"ray\b", r)]  # `pip install '.[test]'` pulls no Ray
    assert set(extras["testing"]) <= set(extras["test"])
    # the contrib envs run tests on the throwaway control plane, which needs the testing extra
    assert all("testing" in _tox_list(env, "extras") for env in envs if env.startswith("contrib-"))


def test_the_type_env_checks_against_the_yaml_and_jsonschema_stubs():
    """mypy reads PyYAML's and jsonschema's types from their typeshed stubs (types-PyYAML,
    types-jsonschema): the `type` env installs them, and no mypy override tells it to ignore those
    modules, which would turn every call into them into Any and hide misuse."""
    deps = {re.split(r"[<>=!~ ]", d, maxsplit=1)[0].lower() for d in _tox_list("type", "deps")}
    assert {"mypy", "types-pyyaml", "types-jsonschema"} <= deps
    ignored = {module for override in pyproject(ROOT)["tool"]["mypy"].get("overrides", [])
               if override.get("ignore_missing_imports") for module in override["module"]}
    assert not {m for m in ignored if m.split(".")[0] in ("yaml", "jsonschema")}


def test_all_of_kschedfw_is_type_checked_strictly_in_ci_and_in_the_project_config():
    """The `type` env runs ``mypy --strict`` over the whole package, and ``[tool.mypy]`` is strict
    as a whole, so plain ``mypy`` (an editor, a pre-commit hook) holds every module to the same
    flags and no module is left out of a list."""
    commands = _tox_env("type")["commands"].replace("\\\n", " ").splitlines()
    assert any(line.split()[:2] == ["mypy", "--strict"] and "{posargs:kschedfw}" in line for line in commands), commands
    config = pyproject(ROOT)["tool"]["mypy"]
    assert config["strict"] is True and config["files"] == ["kschedfw"]
    assert not [o for o in config.get("overrides", []) if any(o.get(flag) is False for flag in (
        "disallow_untyped_defs", "disallow_any_generics", "warn_return_any"))]
