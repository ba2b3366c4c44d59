"""What the embedded engine's batch path computed in earlier runs: query vectors and cross-encoder
scores, kept in one SQLite file so a run after a few golden questions changed pays only for those.

Where: beside the index folder, never inside it (``cache_path``: ``.index/docs`` keeps
``.index/docs.cache.sqlite``, with SQLite's ``-wal`` and ``-shm`` files next to it). The folder's
files are the manifest's, checked by ``index_damage`` and published by ``publish_index``; this file
is neither, and a rebuilt index in the same folder keeps it.

Keys: a model key, then the sha256 of each text exactly as the model was given it.

- ``query_vectors``: (model key, sha256(query prefix + question)) -> float32 little-endian bytes; a
  scratch index's passages (``engine.scratch.TextVectors``) are kept here too, keyed by the passage as
  embedded: a text's vector is the same whether it is asked as a query or embedded as a passage
- ``pair_scores``: (model key, sha256(question), sha256(chunk's ``indexed_text``)) -> the logit
  (stored as a double, which holds the float32 exactly)
- ``chat_notes``: one sha256 of what decides a chat model's note for a chunk (the model, the request's
  wording, the chunk's and the document's text; ``chunking_eval.notes``) -> the note, so a chunking
  run again asks the model nothing it asked before

The model key is the sha256 of what decides an output: the model as ``model_catalog.model_info`` describes
it (its .onnx and tokenizer sha256, pooling, max tokens, query prefix, rows per call), how texts are
batched, and the tokenizers and onnxruntime versions. A changed chunk text or another model misses
on its own, so the index fingerprint is not part of any key.

Only ``EmbeddedTarget.search_batch`` (the ranks) and a scratch build's ``TextVectors`` read and write it; ``search``
(the timed path) never does. Several processes may share the file (the Function App ranks setups in parallel on one
index copy): WAL mode and a busy timeout, and each write is one transaction of ``INSERT OR IGNORE``
(a key always maps to the same value). A cache never fails a run: a file that cannot be opened, read
or written (a read-only folder, a corrupt file, a lock held past the timeout) logs one warning and
the target goes on without it. Nor does it change a file that is not a cache: a database holding
other tables is given up on before anything is added to it (``--cache`` given another program's file).
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..files import OutputKind

log = logging.getLogger(__name__)

CACHE_FORMAT = 1  # PRAGMA user_version: a file of another format is left alone, unread
SQLITE_HEADER = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
# A --cache given on the command line: a SQLite file (this cache, or one whose tables are refused when it is
# opened, see _open_once) or a new one; never a corpus or a golden file.
VECTOR_CACHE = OutputKind("vector cache", own=lambda head: head.startswith(SQLITE_HEADER),
                          example="vectors.cache.sqlite")
CACHE_SUFFIX = ".cache.sqlite"
BUSY_TIMEOUT_S = 30.0  # a writer waits this long for another process's transaction (each is milliseconds)
OPEN_ATTEMPTS = 5  # tries at opening when SQLite answers "locked" without waiting (see _connect)
OPEN_RETRY_PAUSE_S = 0.2

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS query_vectors (model BLOB NOT NULL, text BLOB NOT NULL, vector BLOB NOT NULL, "
    "PRIMARY KEY (model, text)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS pair_scores (model BLOB NOT NULL, query BLOB NOT NULL, passage BLOB NOT NULL, "
    "score REAL NOT NULL, PRIMARY KEY (model, query, passage)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS chat_notes (key BLOB NOT NULL PRIMARY KEY, note TEXT NOT NULL) WITHOUT ROWID",
)


_TABLES = ("query_vectors", "pair_scores", "chat_notes")


def _tables(connection: sqlite3.Connection) -> set[str]:
    """The file's own tables (SQLite's ``sqlite_*`` ones left out)."""
    return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not row[0].startswith("sqlite_")}


def cache_path(index_folder: str | Path) -> Path:
    """The cache file of the index in ``index_folder``: its sibling ``<folder name>.cache.sqlite``."""
    folder = Path(index_folder).resolve()
    return folder.parent / f"{folder.name}{CACHE_SUFFIX}"


def model_key(name: str) -> bytes:
    """sha256 of everything that decides model ``name``'s outputs (see the module docstring); nothing is loaded."""
    from .identity import model_identity, software_versions
    from .graphs import batching
    from .model_catalog import model_info

    software = software_versions()
    described = {"model": model_identity(model_info(name).to_dict()), "batching": batching(),
                 "software": {k: software[k] for k in ("tokenizers", "onnxruntime")}}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode("utf-8")).digest()


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def kept_vector(blob: object, dimensions: int) -> np.ndarray | None:
    """The float32 vector a cache kept as ``blob``; None (recomputed) unless it holds exactly
    ``dimensions`` finite numbers: a file edited or damaged to hold NaN is never served."""
    if not isinstance(blob, bytes) or len(blob) != 4 * dimensions:
        return None
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return vector if np.isfinite(vector).all() else None


class PersistentCache:
    """One cache file, opened on first use. Every method swallows the file's failures (after one
    warning) and answers as an empty cache would: nothing found, nothing kept."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._connection: sqlite3.Connection | None = None
        self._broken = False
        self._lock = threading.Lock()  # one connection, possibly used from the host's threads

    @property
    def usable(self) -> bool:
        return not self._broken

    def vectors(self, model: bytes, texts: Sequence[str], dimensions: int) -> dict[str, np.ndarray]:
        """The stored vector of each of ``texts`` that has one (of ``dimensions`` float32s), by text."""
        found = {}
        for text, blob in zip(texts, self._lookup(
                "SELECT vector FROM query_vectors WHERE model = ? AND text = ?",
                [(model, text_key(t)) for t in texts]), strict=True):
            vector = kept_vector(blob, dimensions)
            if vector is not None:
                found[text] = vector
        return found

    def put_vectors(self, model: bytes, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(model, text_key(t), np.asarray(v, dtype="<f4")) for t, v in items]
        self._store("INSERT OR IGNORE INTO query_vectors (model, text, vector) VALUES (?, ?, ?)",
                    [(m, t, v.tobytes()) for m, t, v in rows if np.isfinite(v).all()])  # a NaN is never kept

    def scores(self, model: bytes, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """The stored logit of each (query, passage) pair that has one, by pair."""
        found = {}
        for pair, score in zip(pairs, self._lookup(
                "SELECT score FROM pair_scores WHERE model = ? AND query = ? AND passage = ?",
                [(model, text_key(q), text_key(p)) for q, p in pairs]), strict=True):
            if isinstance(score, (int, float)) and math.isfinite(score):  # a file edited to hold NaN: recomputed
                found[pair] = float(score)
        return found

    def scored_queries(self, model: bytes, queries: Sequence[str]) -> set[str]:
        """The ``queries`` with at least one pair score stored (a question an earlier run reranked): what a
        run's time left counts as nearly free before its batch starts."""
        found = self._lookup("SELECT 1 FROM pair_scores WHERE model = ? AND query = ? LIMIT 1",
                             [(model, text_key(q)) for q in queries])
        return {q for q, row in zip(queries, found, strict=True) if row is not None}

    def put_scores(self, model: bytes, items: Iterable[tuple[tuple[str, str], float]]) -> None:
        self._store("INSERT OR IGNORE INTO pair_scores (model, query, passage, score) VALUES (?, ?, ?, ?)",
                    [(model, text_key(q), text_key(p), float(s)) for (q, p), s in items if math.isfinite(s)])

    def notes(self, keys: Sequence[bytes]) -> dict[bytes, str]:
        """The stored note of each key that has one, by key."""
        return {
            key: note
            for key, note in zip(
                keys, self._lookup("SELECT note FROM chat_notes WHERE key = ?", [(k,) for k in keys]), strict=True
            )
            if isinstance(note, str)
        }

    def put_notes(self, items: Iterable[tuple[bytes, str]]) -> None:
        self._store("INSERT OR IGNORE INTO chat_notes (key, note) VALUES (?, ?)", [(k, n) for k, n in items])

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    # -- the file -----------------------------------------------------------------------------
    def _lookup(self, sql: str, keys: list[tuple]) -> list:
        """One value per key (None where the file has none, or when it cannot be read). A file not made yet
        holds nothing and is not made by a read: only a write makes it (a run that keeps nothing leaves none)."""
        with self._lock:
            if self._connection is None and not self.path.exists():
                return [None] * len(keys)
            connection = self._connect()
            if connection is None or not keys:
                return [None] * len(keys)
            try:
                out = []
                for key in keys:
                    row = connection.execute(sql, key).fetchone()
                    out.append(row[0] if row else None)
                return out
            except sqlite3.Error as err:
                self._give_up("cannot be read", err)
                return [None] * len(keys)

    def _store(self, sql: str, rows: list[tuple]) -> None:
        """All ``rows`` in one transaction, or none of them."""
        with self._lock:
            connection = self._connect()
            if connection is None or not rows:
                return
            try:
                connection.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade to deadlock on
                try:
                    connection.executemany(sql, rows)
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
            except sqlite3.Error as err:
                self._give_up("cannot be written", err)

    def _connect(self) -> sqlite3.Connection | None:
        if self._broken or self._connection is not None:
            return self._connection
        # Two processes opening a new file at once can meet SQLite's deadlock rule while one switches the
        # journal to WAL: it answers "database is locked" at once, without waiting on the busy timeout
        # (seen once in five full test runs on 2 loaded cores). Opening again a moment later succeeds.
        for attempt in range(OPEN_ATTEMPTS):
            connection = self._open_once(last=attempt == OPEN_ATTEMPTS - 1)
            if connection is not None or self._broken:
                return connection
            time.sleep(OPEN_RETRY_PAUSE_S)
        return None

    def _open_once(self, *, last: bool) -> sqlite3.Connection | None:
        """One try at opening and preparing the file; None to try again (a lock met at opening, not the last
        try), or None with the cache given up."""
        connection = None
        try:
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                         check_same_thread=False)
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")  # a cache may lose its last write to a power cut
            connection.execute("BEGIN IMMEDIATE")
            try:
                version = connection.execute("PRAGMA user_version").fetchone()[0]
                if version not in (0, CACHE_FORMAT):
                    raise sqlite3.DatabaseError(f"it is a cache of format {version}, not {CACHE_FORMAT}")
                foreign = sorted(_tables(connection) - set(_TABLES))
                if foreign:  # another program's database: nothing is added to it
                    raise sqlite3.DatabaseError(f"it is not a search cache: it holds the table(s) "
                                                f"{', '.join(foreign[:5])}")
                for statement in _SCHEMA:
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version = {CACHE_FORMAT}")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")
        except (sqlite3.Error, OSError) as err:
            if connection is not None:
                connection.close()
            if not last and isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
                return None
            self._give_up("cannot be opened", err)
            return None
        self._connection = connection
        return connection

    def _give_up(self, what: str, err: Exception) -> None:
        if not self._broken:
            log.warning("the search cache %s %s (%s); this run goes on without it. Delete the file if it is "
                        "damaged, or pass --no-cache", self.path, what, err)
        self._broken = True
        if self._connection is not None:
            try:
                self._connection.close()
            except sqlite3.Error:
                pass
            self._connection = None
