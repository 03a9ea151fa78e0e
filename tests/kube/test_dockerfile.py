"""deploy/Dockerfile, checked without a container engine (this machine has no Docker daemon and
no image registry, so the image itself is never built here): its build context holds what it
copies, that context alone builds the package with the README's install command, the entrypoint
is the package's console script and `run`, and the Deployment runs that image with its config
where the image looks for it."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` in order; comments dropped, continuation lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        keyword, _, rest = pending.strip().partition(" ")
        out.append((keyword.upper(), rest.strip()))
        pending = ""
    return out


def of(keyword: str) -> list[str]:
    return [rest for k, rest in instructions() if k == keyword]


def copies() -> list[tuple[list[str], str]]:
    """``(sources, destination)`` of every COPY (no --from stages here)."""
    out = []
    for rest in of("COPY"):
        words = [w for w in shlex.split(rest) if not w.startswith("--")]
        out.append((words[:-1], words[-1]))
    return out


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_copy_source_is_in_the_repository():
    assert copies(), "the Dockerfile copies nothing"
    for sources, _ in copies():
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository (the build context)"


def test_the_base_image_python_satisfies_requires_python():
    base = of("FROM")[0]
    version = re.match(r"python:(\d+)\.(\d+)", base)
    assert version, f"FROM {base}: not an official python image"
    minimum = re.match(r">=\s*(\d+)\.(\d+)", pyproject()["project"]["requires-python"])
    assert minimum and tuple(map(int, version.groups())) >= tuple(map(int, minimum.groups()))


def test_it_installs_with_the_readmes_command():
    readme_install = next(line for line in (ROOT / "README.md").read_text().splitlines()
                          if "-m pip install ." in line)
    assert readme_install.startswith("python3 -m pip install . ")
    runs = [r for r in of("RUN") if "pip install" in r]
    assert len(runs) == 1
    command = runs[0].split("&&")[0].split()
    # the README's `python3 -m pip install .`; the image's interpreter is `python`, and pip's
    # cache is left out of the layer
    assert command[:4] == ["python", "-m", "pip", "install"]
    assert [w for w in command[4:] if not w.startswith("-")] == ["."]
    assert set(w for w in command[4:] if w.startswith("-")) <= {"--no-cache-dir"}


def test_the_entrypoint_is_the_console_script_and_run():
    entrypoint = yaml.safe_load(of("ENTRYPOINT")[0])  # exec form: a JSON list
    assert entrypoint[0] in pyproject()["project"]["scripts"]
    module, _, function = pyproject()["project"]["scripts"][entrypoint[0]].partition(":")
    main = getattr(__import__(module, fromlist=[function]), function)
    with pytest.raises(SystemExit) as exited:  # `run` is a subcommand with these options
        main([*entrypoint[1:], *yaml.safe_load(of("CMD")[0]), "--help"])
    assert exited.value.code == 0


def test_the_deployment_runs_this_image_with_its_config_where_cmd_looks():
    build_hint = next(line for line in DOCKERFILE.read_text().splitlines() if "docker build" in line)
    tag = build_hint.split(" -t ")[1].split()[0]
    deployment = yaml.safe_load((ROOT / "deploy" / "deployment.yaml").read_text())
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == tag
    args = container.get("args") or yaml.safe_load(of("CMD")[0])
    config_path = Path(args[args.index("--config") + 1])
    mount = next(m for m in container["volumeMounts"] if config_path.is_relative_to(m["mountPath"]))
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    configmap = yaml.safe_load((ROOT / "deploy" / "configmap.yaml").read_text())
    assert volume["configMap"]["name"] == configmap["metadata"]["name"]
    assert str(config_path.relative_to(mount["mountPath"])) in configmap["data"]
    user = of("USER")[0].split(":")[0]
    assert user.isdigit() and int(user) != 0  # runs as non-root, as the Deployment's securityContext expects


def test_the_build_context_alone_builds_a_complete_package(tmp_path):
    """What `pip install .` does in the image, minus the network: a wheel from exactly the files
    the Dockerfile copies, holding the package data and the console script."""
    context = tmp_path / "src"
    context.mkdir()
    for sources, destination in copies():
        for source in sources:
            target = context / (Path(destination) / Path(source).name if destination.endswith("/")
                                else Path(destination))
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / source, target)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--no-cache-dir", "-q", "-w", str(tmp_path / "dist"), str(context)],
                           capture_output=True, text=True, timeout=240)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("kschedfw-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kschedfw").rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    assert expected - names == set(), "files of the package missing from the image's install"
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "kschedfw = kschedfw.cli.main:main" in text
