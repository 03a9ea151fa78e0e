"""The README's "Write a plugin" section is a working project: its plugin module, entry point,
configuration and tests are written out as files and its tests run, so the example cannot drift."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Write a plugin"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def readme_blocks() -> dict[str, tuple[str, str]]:
    """``{path: (language, text)}`` for each fenced block of the section; a block's first line
    names its file (``# my_plugin/plugin.py``)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ", len(SECTION))]
    blocks = {}
    for lang, body in BLOCK.findall(section):
        first = body.splitlines()[0]
        assert first.startswith("# "), f"README {lang} block under {SECTION!r} must start with '# <file>': {first!r}"
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


def test_readme_plugin_example_passes_its_own_tests(tmp_path):
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
