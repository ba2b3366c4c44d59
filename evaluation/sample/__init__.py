"""The shipped sample, wherever the package is installed: ``CORPUS`` (270 sections of 21 PyPI packages'
READMEs) and ``GOLDEN`` (36 labelled questions), the files of ``samples/`` in the repository (these are
links to them, copied whole into a wheel), so the README's library example runs from any folder."""
from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
CORPUS = _HERE / "corpus.jsonl"
GOLDEN = _HERE / "golden.jsonl"
