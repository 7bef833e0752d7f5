"""The README's code blocks run as written (in a fresh folder, on the bundled data).

Python blocks run in this process. Bash blocks run in bash, in a fresh folder where
``src`` is the checkout's ``src`` (the commands name the bundled data by those paths).
Each bash block that uses the package begins by installing it into a virtual environment,
``python3 -m venv .venv && .venv/bin/pip install -q .``; CI cannot afford a build and an
install per block, so that prefix alone is replaced: ``.venv/bin/warpalign`` is made to
run this interpreter's ``python -m warpalign`` on the package under test (the one these
tests import). Every other command of the block runs as written. The block that runs the
tests is what CI runs (``.ci/run``): it is checked to be that command, not run again
inside the tests.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The install prefix of the README's bash blocks (replaced here, see the docstring).
INSTALL = "python3 -m venv .venv && .venv/bin/pip install -q . && "
#: The README's test command: CI runs it (.ci/run).
TESTS = ('python3 -m venv .venv && .venv/bin/pip install -q -e ".[test]" && '
         ".venv/bin/python -m pytest")


def _blocks(language: str = "python") -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_blocks():
    assert _blocks(), "the README shows how to use warpalign from Python"


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_python_block_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(_blocks()[index], f"README.md python block {index + 1}", "exec"), namespace)


def test_a_missing_extra_says_how_to_install_it(monkeypatch):
    from warpalign import Scoring, search
    hits = search(["HEAGAWGHEE"], ["PAWHEAE", "HEAGAWGHEE"], Scoring(matrix="BLOSUM62",
                  gap_open=11, gap_extend=1))[0]
    monkeypatch.setitem(sys.modules, "pandas", None)      # as if not installed
    with pytest.raises(ImportError, match=r'pip install "warpalign\[pandas\]"'):
        hits.to_pandas()


def test_readme_bash_blocks_are_known():
    """Every bash block either installs the package first (run below) or is the test
    command, which is CI's own (.ci/run runs exactly it)."""
    blocks = [b.strip() for b in _blocks("bash")]
    assert blocks
    assert all(b.startswith(INSTALL) or b == TESTS for b in blocks), blocks
    assert TESTS in blocks
    assert TESTS in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def _installed(folder: Path) -> dict:
    """``folder/.venv/bin/warpalign`` running this interpreter on the package under test
    (what the install prefix would give); returns the environment to run the block in."""
    import warpalign
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "warpalign"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m warpalign "$@"\n')
    script.chmod(0o755)
    package_root = str(Path(warpalign.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH"))
                                        if p)
    return env


@pytest.mark.parametrize("index", [i for i, b in enumerate(_blocks("bash"))
                                   if b.strip().startswith(INSTALL)])
def test_readme_bash_block_runs(index, tmp_path):
    block = _blocks("bash")[index].strip()
    (tmp_path / "src").symlink_to(ROOT / "src", target_is_directory=True)
    env = _installed(tmp_path)
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", block[len(INSTALL):]],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
                         check=False)
    assert run.returncode == 0, f"README bash block {index + 1}:\n{block}\n{run.stderr}"
    assert "Traceback" not in run.stderr
    lines = run.stdout.splitlines()
    if "warpalign search" in block:      # the database search: a header, then hits
        assert lines[0].startswith("#") and len(lines) > 1
        assert all(len(line.split("\t")) == len(lines[0].split("\t")) for line in lines)
    if "--format sam" in block:          # read mapping: reads on both strands, some unmapped
        flags = {line.split("\t")[1] for line in lines if not line.startswith("@")}
        assert {"0", "16", "4"} <= flags, flags
