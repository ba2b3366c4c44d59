"""The batch path's cache kept in Blob storage, so it outlives the instance that computed it.

The local cache (``engine.cache``) is one SQLite file on an instance's temporary disk, which the next
run's instances do not have: in the Function App every save paid for every query vector and
cross-encoder pair again. ``SharedCache`` keeps the same entries, keyed the same way (a model key,
then the sha256 of each text exactly as the model was given it), under a prefix of the app's
storage account, with the same methods as ``PersistentCache`` so ``EmbeddedTarget`` takes either.

What was chosen, and why:

- **Many writers, nothing lost: one new blob per write.** An activity keeps what it computed in
  memory and ``flush`` writes it as one new blob ``parts/<sha256 of its bytes>.bin``, created only if
  absent. Writers never touch the same blob (two with the same name hold the same bytes), so no
  lease, no ETag race and no append-blob block limit (50,000 blocks) is met. Append blobs were the
  other choice: they let writers interleave blocks, but a block can be half a record, and a reader
  would need a lock-free framing; one blob per write is whole or absent.
- **Reads bounded however many runs came before: compaction.** When a flush finds more than
  ``COMPACT_AT`` parts, it reads every base and part, writes their union as one new
  ``bases/<sha256>.bin`` naming the parts it holds, then deletes those parts and the bases it read.
  A reader reads every base, then the parts no base names: at most a few bases plus ``COMPACT_AT``
  parts plus those written since, whatever the history. Two compactions at once each write a base
  holding what they read, so both bases survive until the next compaction merges them; a part is
  deleted only after a base holding it exists, so nothing is lost. A part deleted while a reader
  lists is read again from the base that holds it (the read starts over, ``READ_ATTEMPTS`` times).
  The size grows with distinct texts only (an entry is kept once): at 1,000 questions, 3 models and
  90,000 pairs about 11 MB.
- **Damage is ignored with a log line.** Every blob ends with the sha256 of what comes before it; a
  blob that does not parse or check (``decode``: a checksum that does not match, a header nested
  deeper than it should be, a vector or score that is not finite) is skipped with a warning naming it
  (and a compaction drops it), so a damaged blob costs recomputation, never the rest of the cache and
  never a run. Any storage failure likewise: the cache answers as an empty one and the run goes on.
  A vector or score that is not finite is never written either.

Blob format: ``MAGIC``, a JSON line ``{"parts": [names it holds], "vectors": n, "scores": m}``, then
n vectors (model key 32 bytes, text key 32, dimensions uint32 little-endian, float32s), m scores
(model key 32, question key 32, passage key 32, float64), then the sha256 of all before it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import struct
import threading
from typing import Any, Iterable, Sequence

import numpy as np

from ..errors import CacheDamaged  # noqa: F401  (its name before the naming rule, importable here as before)
from ..errors import CacheDamagedError
from ..store import checks
from ..store.shape import loads_report
from .cache import kept_vector, text_key

log = logging.getLogger(__name__)

MAGIC = b"retrieval-evaluation cache 1\n"
COMPACT_AT = 16  # parts a flush tolerates before it compacts them into a base
READ_ATTEMPTS = 3
PARTS, BASES = "parts/", "bases/"
_KEY = 32
_DIM = struct.Struct("<I")
_SCORE = struct.Struct("<d")


def encode(vectors: dict[tuple[bytes, bytes], bytes], scores: dict[tuple[bytes, bytes, bytes], float],
           parts: Sequence[str] = ()) -> bytes:
    """One cache blob holding ``vectors`` ((model, text key) -> float32 bytes) and ``scores``."""
    body = [MAGIC,
            json.dumps({"parts": sorted(parts), "vectors": len(vectors), "scores": len(scores)}).encode() + b"\n"]
    for (model, text), vector in sorted(vectors.items()):
        body += [model, text, _DIM.pack(len(vector) // 4), vector]
    for (model, query, passage), score in sorted(scores.items()):
        body += [model, query, passage, _SCORE.pack(score)]
    data = b"".join(body)
    return data + hashlib.sha256(data).digest()


def decode(data: bytes) -> tuple[dict, dict, list[str]]:
    """(vectors, scores, parts named) of one cache blob; ``CacheDamagedError`` when it is not whole, and for
    anything else that is not what ``encode`` writes: a header that is not the flat JSON object above
    (however deeply nested: read by ``store.shape.loads_report``, which refuses instead of recursing),
    a vector or score that is not finite (NaN would rank every passage alike and be served to every
    later run), a vector that runs past the end."""
    if len(data) < len(MAGIC) + _KEY or not data.startswith(MAGIC):
        raise CacheDamagedError("it does not start as a cache blob does")
    data, digest = data[:-_KEY], data[-_KEY:]
    if hashlib.sha256(data).digest() != digest:
        raise CacheDamagedError("its checksum does not match (cut short or changed)")
    end = data.find(b"\n", len(MAGIC))
    if end < 0:
        raise CacheDamagedError("its header has no end")
    try:
        header = loads_report(data[len(MAGIC):end])
    except ValueError as err:
        raise CacheDamagedError(f"its header is {err}") from None
    problem = checks.problem(_header, header, "its header")
    if problem is not None:
        raise CacheDamagedError(problem)
    at, vectors, scores = end + 1, {}, {}
    try:
        for n in range(header["vectors"]):
            model, text = data[at:at + _KEY], data[at + _KEY:at + 2 * _KEY]
            (dims,) = _DIM.unpack_from(data, at + 2 * _KEY)
            at += 2 * _KEY + _DIM.size
            if at + 4 * dims > len(data):
                raise CacheDamagedError(f"vector {n + 1} runs past the end of the blob")
            vector = data[at:at + 4 * dims]
            if not np.isfinite(np.frombuffer(vector, dtype="<f4")).all():
                raise CacheDamagedError(f"vector {n + 1} holds a number that is not finite (NaN or infinity)")
            vectors[(model, text)] = vector
            at += 4 * dims
        for n in range(header["scores"]):
            key = (data[at:at + _KEY], data[at + _KEY:at + 2 * _KEY], data[at + 2 * _KEY:at + 3 * _KEY])
            (score,) = _SCORE.unpack_from(data, at + 3 * _KEY)
            if not math.isfinite(score):
                raise CacheDamagedError(f"score {n + 1} is {score}, not a finite number")
            scores[key] = score
            at += 3 * _KEY + _SCORE.size
    except struct.error as err:
        raise CacheDamagedError(f"it is shorter than its header says ({err})") from err
    if at != len(data):
        raise CacheDamagedError(f"it holds {len(data) - at} bytes more than its header says")
    return vectors, scores, list(header["parts"])


def _header(value: Any, path: str) -> dict:
    """``{"parts": [names], "vectors": n, "scores": m}``, as ``encode`` writes it."""
    header = checks.obj(value, path)
    checks.field(header, "parts", checks.list_of(checks.text), path)
    checks.field(header, "vectors", checks.count, path)
    checks.field(header, "scores", checks.count, path)
    return header


def _finite(vector: np.ndarray) -> bool:
    return bool(np.isfinite(vector).all())


class SharedCache:
    """The cache under ``prefix`` of a Blob ``container`` (a ``ContainerClient``), loaded on first use.

    Same methods as ``PersistentCache``; what ``put_*`` is given is kept in memory until ``flush``.
    Never raises for storage or damage: it logs one warning and answers as an empty cache would.
    """

    def __init__(self, container: Any, prefix: str) -> None:
        self.container, self.prefix = container, prefix.rstrip("/") + "/"
        self._vectors: dict[tuple[bytes, bytes], bytes] = {}
        self._scores: dict[tuple[bytes, bytes, bytes], float] = {}
        self._new_vectors: dict[tuple[bytes, bytes], bytes] = {}
        self._new_scores: dict[tuple[bytes, bytes, bytes], float] = {}
        self._loaded = False
        self._lock = threading.Lock()
        self.read_blobs = 0  # how many blobs the load read: bounded by compaction (tested)

    @property
    def usable(self) -> bool:
        return True

    # -- PersistentCache's methods --------------------------------------------------------------
    def vectors(self, model: bytes, texts: Sequence[str], dimensions: int) -> dict[str, np.ndarray]:
        self._load()
        found = {}
        for text in texts:
            vector = kept_vector(self._vectors.get((model, text_key(text))), dimensions)
            if vector is not None:
                found[text] = vector
        return found

    def put_vectors(self, model: bytes, items: Iterable[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            for text, vector in items:
                key = (model, text_key(text))
                vector = np.asarray(vector, dtype="<f4")
                if key not in self._vectors and _finite(vector):  # a NaN is never kept for the next runs
                    self._vectors[key] = self._new_vectors[key] = vector.tobytes()

    def scores(self, model: bytes, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]:
        self._load()
        found = {}
        for query, passage in pairs:
            score = self._scores.get((model, text_key(query), text_key(passage)))
            if score is not None:
                found[(query, passage)] = score
        return found

    def scored_queries(self, model: bytes, queries: Sequence[str]) -> set[str]:
        self._load()
        asked = {(model, text_key(q)) for q in queries}
        held = {(m, q) for m, q, _ in self._scores if (m, q) in asked}
        return {q for q in queries if (model, text_key(q)) in held}

    def put_scores(self, model: bytes, items: Iterable[tuple[tuple[str, str], float]]) -> None:
        with self._lock:
            for (query, passage), score in items:
                key = (model, text_key(query), text_key(passage))
                if key not in self._scores and math.isfinite(score):
                    self._scores[key] = self._new_scores[key] = float(score)

    def close(self) -> None:
        self.flush()

    # -- the blobs ------------------------------------------------------------------------------
    def flush(self) -> str | None:
        """Write what was put since the last flush as one new part (compacting when parts pile up);
        its blob name, or None when there was nothing new or the write failed (logged)."""
        with self._lock:
            if not self._new_vectors and not self._new_scores:
                return None
            data = encode(self._new_vectors, self._new_scores)
            name = f"{self.prefix}{PARTS}{hashlib.sha256(data).hexdigest()}.bin"
            try:
                from ..store.blob import write_new_blob

                write_new_blob(self.container, name, data)  # False: the same bytes are there already
            except Exception as err:  # noqa: BLE001 - a cache never fails a run
                log.warning("the shared cache %s could not be written (%s); this run's vectors and scores "
                            "are not kept for the next", self.prefix, err)
                return None
            self._new_vectors, self._new_scores = {}, {}
        try:
            self.compact(at_least=COMPACT_AT + 1)
        except Exception as err:  # noqa: BLE001
            log.warning("the shared cache %s could not be compacted (%s); the next flush tries again", self.prefix, err)
        return name

    def compact(self, *, at_least: int = 1) -> str | None:
        """Merge every base and part into one new base when there are ``at_least`` parts; its name."""
        from ..store.blob import delete_blobs, list_blob_names, write_new_blob

        parts = list_blob_names(self.container, self.prefix + PARTS)
        if len(parts) < at_least:
            return None
        bases = list_blob_names(self.container, self.prefix + BASES)
        vectors, scores, held = {}, {}, set(parts)
        for name in bases + parts:
            found = self._read(name)
            if not isinstance(found, tuple):
                continue  # gone (another compaction took it: its base holds it) or damaged (dropped)
            vectors.update(found[0])
            scores.update(found[1])
        data = encode(vectors, scores, [p.rsplit("/", 1)[-1] for p in held])
        name = f"{self.prefix}{BASES}{hashlib.sha256(data).hexdigest()}.bin"
        write_new_blob(self.container, name, data)
        delete_blobs(self.container, sorted(held) + [b for b in bases if b != name])
        return name

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            for attempt in range(READ_ATTEMPTS):
                try:
                    if self._load_once(last=attempt == READ_ATTEMPTS - 1):
                        return
                except Exception as err:  # noqa: BLE001 - a cache never fails a run
                    log.warning("the shared cache %s cannot be read (%s); this run computes what it needs",
                                self.prefix, err)
                    return

    def _load_once(self, *, last: bool) -> bool:
        """Every base, then the parts no base holds. False when a listed blob went missing before it was
        read (a compaction moved it into a new base): the caller reads again."""
        from ..store.blob import list_blob_names

        parts = list_blob_names(self.container, self.prefix + PARTS)
        bases = list_blob_names(self.container, self.prefix + BASES)
        vectors, scores, held = {}, {}, set()
        self.read_blobs = 0
        for name in bases:
            found = self._read(name)
            if found is _MISSING and not last:  # a compaction replaced it after the listing
                return False
            if isinstance(found, tuple):
                vectors.update(found[0])
                scores.update(found[1])
                held.update(found[2])
        for name in parts:
            if name.rsplit("/", 1)[-1] in held:
                continue
            found = self._read(name)
            if found is _MISSING and not last:
                return False
            if isinstance(found, tuple):
                vectors.update(found[0])
                scores.update(found[1])
        self._vectors = {**vectors, **self._vectors}
        self._scores = {**scores, **self._scores}
        return True

    def _read(self, name: str) -> tuple[dict, dict, list[str]] | object | None:
        """The blob's contents; ``_MISSING`` when it is gone, None when it is damaged (logged)."""
        from ..store.blob import read_blob

        try:
            data = read_blob(self.container, name)
        except FileNotFoundError:
            return _MISSING
        self.read_blobs += 1
        try:
            return decode(data)
        except CacheDamagedError as err:
            log.warning("the shared cache blob %s is damaged and ignored: %s", name, err)
            return None


_MISSING = object()  # a listed blob deleted before it was read
