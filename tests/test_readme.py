"""The README's Python blocks run as written (in a fresh folder, on the bundled data)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_blocks():
    assert _blocks(), "the README shows how to use warpalign from Python"


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_python_block_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(_blocks()[index], f"README.md python block {index + 1}", "exec"), namespace)


def test_a_missing_extra_says_how_to_install_it(monkeypatch):
    import sys

    from warpalign import Scoring, search
    hits = search(["HEAGAWGHEE"], ["PAWHEAE", "HEAGAWGHEE"], Scoring(matrix="BLOSUM62",
                  gap_open=11, gap_extend=1))[0]
    monkeypatch.setitem(sys.modules, "pandas", None)      # as if not installed
    with pytest.raises(ImportError, match=r'pip install "warpalign\[pandas\]"'):
        hits.to_pandas()
