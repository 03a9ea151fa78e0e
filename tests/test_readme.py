"""The examples of the README and of the guides in docs/guides/ run as written. The plugin
guide's walk-through is a working project: its plugin module, entry point, configuration and tests
are written out as files and its tests run; the DRA guide's manifests are simulated and must print
what the guide shows, and so must the replay guide's commands. So the examples cannot drift."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from kschedfw.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ROOT / "docs" / "guides"
#: the plugin guide's walk-through: from its heading to the next ``## ``
PLUGIN_PAGE, SECTION = "write-a-plugin.md", "## From the hook to its tests"
DRA_PAGE = "dra.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def section_text(page: str, heading: str | None = None) -> str:
    """The text of ``docs/guides/<page>`` (``README.md`` for ``"README.md"``): all of it, or from
    ``heading`` up to the next ``## `` heading (or the end)."""
    text = (ROOT / page if page == "README.md" else GUIDES / page).read_text()
    if heading is None:
        return text
    section = text[text.index(heading):]
    end = section.find("\n## ", len(heading))
    return section if end < 0 else section[:end]


def section_blocks(page: str, heading: str | None = None) -> list[tuple[str, str]]:
    """``(language, text)`` of each fenced block of ``page``, or of its section under ``heading``."""
    return BLOCK.findall(section_text(page, heading))


def readme_blocks() -> dict[str, tuple[str, str]]:
    """``{path: (language, text)}`` for each fenced block of the section; a block's first line
    names its file (``# my_plugin/plugin.py``)."""
    blocks = {}
    for lang, body in section_blocks(PLUGIN_PAGE, SECTION):
        first = body.splitlines()[0]
        assert first.startswith("# "), f"{PLUGIN_PAGE}: {lang} block under {SECTION!r} must start with '# <file>': {first!r}"
        blocks[first[2:].strip()] = (lang, body)
    return blocks


def write_dist_info(target: Path, pyproject: str) -> None:
    """What installing a package with this pyproject leaves for entry-point discovery."""
    entry_points = tomllib.loads(pyproject)["project"]["entry-points"]
    dist = target / "readme_example-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: readme-example\nVersion: 0.1\n")
    lines = []
    for group, names in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in names.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")


def test_section_has_plugin_entry_point_config_and_tests():
    blocks = readme_blocks()
    assert {lang for lang, _ in blocks.values()} == {"python", "toml", "yaml"}
    assert "pyproject.toml" in blocks and "my-scheduler.yaml" in blocks
    assert any(path.startswith("tests/") for path in blocks)


def test_plugin_guide_example_passes_its_own_tests(tmp_path):
    blocks = readme_blocks()
    for path, (_, body) in blocks.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    write_dist_info(tmp_path, blocks["pyproject.toml"][1])
    tests = [path for path in blocks if path.startswith("tests/")]
    expected = sum(blocks[path][1].count("\ndef test_") for path in tests)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", *tests],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{expected} passed" in done.stdout, done.stdout


def console_runs(text: str) -> list[tuple[list[str], list[str]]]:
    """``(argv, expected output lines)`` for each ``$ kschedfw ...`` of a console block."""
    runs: list[tuple[list[str], list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            argv = shlex.split(line[2:])
            assert argv[0] == "kschedfw", line
            runs.append((argv[1:], []))
        else:
            runs[-1][1].append(line.rstrip())
    return runs


def test_dra_guide_example_prints_what_the_guide_shows(tmp_path, monkeypatch, capsys):
    blocks = section_blocks(DRA_PAGE)
    manifests = [body for lang, body in blocks if lang == "yaml"]
    runs = [run for lang, body in blocks if lang == "console" for run in console_runs(body)]
    assert manifests and runs
    for manifest in manifests:  # each starts with "# <file>"
        (tmp_path / manifest.splitlines()[0][2:].strip()).write_text(manifest)
    monkeypatch.chdir(tmp_path)
    for argv, expected in runs:
        capsys.readouterr()
        assert main(argv) == 0
        printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
        assert printed == expected, "\n".join(printed)


REPLAY_PAGE, REPLAY_SECTION = "record-replay.md", "## Replay a recorded cluster"


def readme_trace(path: Path) -> None:
    """The small trace the replay guide's output is from."""
    from tests.trace.builder import NAMESPACE, binding, event, failed, listed, node, pod, write
    write(path, [
        *listed(NAMESPACE, node("node-1", "2"), node("node-2", "8")),
        event("ADDED", pod("web-1", "1")), *binding("web-1", "node-1", "1"),
        event("ADDED", pod("web-2", "1")), *binding("web-2", "node-1", "1"),
        event("ADDED", pod("batch", "10")), failed("batch", "0/2 nodes are available: 2 Insufficient cpu."),
        event("MODIFIED", node("node-2", "16", rv="2")), *binding("batch", "node-2", "10"),
    ])


def test_replay_guide_example_prints_what_the_guide_shows(tmp_path, monkeypatch, capsys):
    """Each command of the replay guide prints the lines shown, in order (``...``: lines left out)."""
    blocks = section_blocks(REPLAY_PAGE, REPLAY_SECTION)
    for lang, body in blocks:
        if lang == "yaml":
            (tmp_path / body.splitlines()[0][2:].strip()).write_text(body)
    readme_trace(tmp_path / "day.trace.gz")
    runs = [run for lang, body in blocks if lang == "console" for run in console_runs(body)]
    assert len(runs) == 6
    monkeypatch.chdir(tmp_path)
    for argv, expected in runs:
        capsys.readouterr()
        assert main(argv) == (1 if argv[0] == "diff" else 0)
        printed = iter(line.rstrip() for line in capsys.readouterr().out.splitlines())
        for line in expected:
            if line != "...":
                assert line in printed, f"{argv}: {line!r} not printed (in this order)"


# ---------------------------------------------------------------------- install commands that work
TEXT_SUFFIXES = {".md", ".py", ".toml", ".ini", ".yaml", ".yml", ".cfg", ".txt", ".json"}
SKIPPED_DIRS = {".git", ".tox", ".venv", "venv", "build", "dist", "__pycache__", "node_modules"}


def repository_text_files() -> list[Path]:
    """The docs, help texts and messages of the checkout (sources included: --help and error
    messages live there)."""
    found = []
    for path in ROOT.rglob("*"):
        parts = set(path.relative_to(ROOT).parts)
        if parts & SKIPPED_DIRS or any(p.endswith(".egg-info") for p in parts) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name == "Dockerfile":
            found.append(path)
    return found


def distributions() -> dict[str, set[str]]:
    """``{distribution name: its extras}`` of kschedfw and of each contrib package."""
    projects = [ROOT / "pyproject.toml", *(ROOT / "contrib-plugins").glob("*/pyproject.toml")]
    out = {}
    for path in projects:
        project = tomllib.loads(path.read_text())["project"]
        out[project["name"]] = set(project.get("optional-dependencies", {}))
    return out


def test_no_install_instruction_asks_a_package_index_for_kschedfw():
    """kschedfw and its contrib packages are on no package index: `pip install 'kschedfw[ray]'`
    or `pip install kschedfw` fails from a clone. An extra is installed by path (`'.[ray]'` in
    the clone), a contrib package by its folder."""
    names = distributions()
    by_name = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    extras = "|".join(sorted({re.escape(e) for es in names.values() for e in es}, key=len, reverse=True))
    named_extra = re.compile(rf"(?<![\w./-])(?:{by_name})\[(?:{extras})(?:,[\w,-]*)?\]")
    from_index = re.compile(rf"pip install\s+(?:-[\w-]+\s+)*['\"]?(?:{by_name})(?![\w./-])")
    this_file = Path(__file__).resolve()
    offenders = []
    for path in repository_text_files():
        if path.resolve() == this_file:
            continue
        text = path.read_text(errors="replace")
        for pattern in (named_extra, from_index):
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)}")
    assert offenders == [], "\n".join(offenders)


def test_ray_extra_is_installed_from_the_clone():
    """The sweep guide's Ray step (the one such step of the README and the guides) is the path
    form run in the clone, like the README's first command (`python3 -m pip install .`), and names
    an extra pyproject declares."""
    pages = [ROOT / "README.md", *sorted(GUIDES.glob("*.md"))]
    [step] = [line for page in pages for line in page.read_text().splitlines()
              if line.startswith("pip install") and "ray" in line]
    assert step in section_text("sweep.md")
    assert shlex.split(step)[:3] == ["pip", "install", ".[ray]"]
    assert "ray" in distributions()["kschedfw"]


def test_contrib_package_installs_bring_kschedfw_from_the_clone():
    """A contrib package requires `kschedfw`, which no package index serves: pip can resolve it
    only when the same command installs the clone itself (`.`, `-e .` or `'.[extra]'`)."""
    command = re.compile(r"pip install ([^`\n]*contrib-plugins/[^`\n]*)")
    offenders = []
    for path in repository_text_files():
        if path.suffix not in {".md", ".yaml", ".yml"} and path.name != "Dockerfile":
            continue
        text = path.read_text(errors="replace")
        for match in command.finditer(text):
            try:
                words = shlex.split(match.group(1), comments=True)
            except ValueError:  # prose after the command (an apostrophe)
                words = match.group(1).split()
            words = [w for w in words if not w.startswith("-")]
            if not any(w == "." or w.startswith(".[") for w in words):
                line = text.count("\n", 0, match.start()) + 1
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)}")
    assert offenders == [], "\n".join(offenders)


GANGS_PAGE, GANGS_SECTION = "gangs.md", "## Which one: the in-tree path or the coscheduling package"


def test_gang_guide_examples_place_as_the_guide_says(tmp_path):
    """Both gang examples of the gangs guide run as written: in-tree (the gates on), gang train in
    rack-1 and eval not bound; with the coscheduling package (put on the path as installing it
    would), eval bound whole and train pending whole."""
    [(_, block)] = section_blocks(GANGS_PAGE, GANGS_SECTION)
    commands = [shlex.split(line) for line in block.replace("\\\n", " ").splitlines()
                if line.startswith("kschedfw simulate")]
    assert len(commands) == 2
    package = ROOT / "contrib-plugins" / "kschedfw-coscheduling"
    write_dist_info(tmp_path, (package / "pyproject.toml").read_text())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(package / "src"), str(tmp_path)])}
    placed = []
    for argv in commands:
        done = subprocess.run([sys.executable, "-m", "kschedfw.cli.main", *argv[1:], "-o", "json"], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        placed.append({p["pod"].split("/")[1]: p["node"] for p in json.loads(done.stdout)["pods"]})
    in_tree, coscheduling = placed
    assert sorted(in_tree[f"train-{i}"] for i in range(4)) == ["node-a", "node-a", "node-b", "node-b"]
    assert [in_tree[f"eval-{i}"] for i in range(3)] == ["", "", ""]
    assert all(coscheduling[f"eval-{i}"] for i in range(3))
    assert [coscheduling[f"train-{i}"] for i in range(4)] == ["", "", "", ""]


# ---------------------------------------------------------------------- the README's tour
def test_readme_starts_with_the_two_setup_commands():
    """The README opens with the quick start: install and simulate the demo, install tox and run
    the suite."""
    [(lang, first)] = BLOCK.findall(section_text("README.md").split("\n## ", 1)[0])
    assert lang == "sh" and first.splitlines() == ["python3 -m pip install . && kschedfw simulate",
                                                   "python3 -m pip install tox && python3 -m tox"]


def test_readme_tour_prints_what_the_readme_shows(monkeypatch, capsys):
    """Each ``$ kschedfw`` of the tour's console blocks, run in the clone, prints the lines shown
    (exactly; after a ``...``, the lines shown in order) with its exit status (``diff``: 1, the
    pods differ). ``run`` needs an API server, which these tests do not start: its block is
    checked to be the dry run the text describes."""
    tour = section_text("README.md", "## A tour")
    runs = [run for lang, body in BLOCK.findall(tour) if lang == "console" for run in console_runs(body)]
    simulated = [(argv, expected) for argv, expected in runs if argv[0] != "run"]
    assert [argv[0] for argv, _ in simulated] == ["simulate", "simulate", "validate", "diff"]
    [(run_argv, run_shown)] = [(argv, expected) for argv, expected in runs if argv[0] == "run"]
    assert "--dry-run" in run_argv and run_shown[-1].endswith("nothing was written")
    monkeypatch.chdir(ROOT)
    for argv, expected in simulated:
        capsys.readouterr()
        assert main(argv) == (1 if argv[0] == "diff" else 0), argv
        printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
        if "..." not in expected:
            assert printed == expected, "\n".join(printed)
            continue
        lines = iter(printed)
        for line in expected:
            if line != "...":
                assert line in lines, f"{argv}: {line!r} not printed (in this order)"
