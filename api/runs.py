"""What the routes say about runs, without HTTP: finding a run, a page of runs, one run as JSON.

Runs live per collection (``<container>/<collection>/retrieval/runs/<id>/``). A route names a run by
its id and, optionally, its collection (``?collection=docs``); ``latest`` is the newest run of the
collection given, or of all of them. A run id alone is looked up in every collection (ids carry the
time and 24 random bits, so two collections sharing one is unlikely, and answered with 409 if it
happens). Every link the routes give names the collection, so it never needs the lookup.
"""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from app.http import Refusal
from evaluation.errors import DamagedFileError, RunNotFoundError, StoreError, shown
from evaluation.report.notes import missing_notes
from evaluation.store.run_report import RunReport
from evaluation.store import LATEST, check_run_id
from evaluation.store.collections import Collections, RunRef, latest_run, newest_runs
from evaluation.store.runs import RunStore, history_row

from .principal import Caller

log = logging.getLogger(__name__)

MAX_LIMIT = 100
PREFIX = "/api"


def links(ref: RunRef) -> dict[str, str]:
    query = urlencode({"collection": ref.collection})
    base = f"{PREFIX}/v1/evaluations/{ref.run_id}"
    return {"self": f"{base}?{query}", "report_html": f"{base}/report.html?{query}",
            "golden": f"{base}/golden?{query}",
            "page": f"{PREFIX}/evaluate?{urlencode({'collection': ref.collection, 'run': ref.run_id})}"}


def whole_number(text: str | None, name: str, default: int, *, lowest: int, highest: int | None = None) -> int:
    """A query parameter as a whole number in range; ``Refusal`` 400 naming it otherwise."""
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < lowest or (highest is not None and value > highest):
        span = f"from {lowest} to {highest}" if highest is not None else f"of {lowest} or more"
        raise Refusal(400, f"{name}={shown(text)} must be a whole number {span}")
    return value


def collection_stores(shelf: Collections, collection: str | None):
    try:
        return shelf.stores(collection)
    except StoreError as err:
        raise Refusal(404 if collection else 503, str(err)) from err


def all_runs(shelf: Collections, collection: str | None = None) -> list[RunRef]:
    """Every run, newest first, of ``collection`` or of every collection."""
    try:
        return newest_runs(collection_stores(shelf, collection))
    except StoreError as err:
        raise Refusal(503, str(err)) from err


def find_run(shelf: Collections, run: str, collection: str | None = None) -> RunRef:
    """The run a route names; ``Refusal`` 404 (none), 409 (one id in two collections) or 400 (bad id)."""
    if run == LATEST:  # the store's rule: the newest run that reads, never a folder not named by time
        try:
            ref = latest_run(collection_stores(shelf, collection))
        except StoreError as err:
            raise Refusal(503, str(err)) from err
        if ref is None:
            where = f"collection {shown(collection)}" if collection else "any collection"
            raise Refusal(404, f"no runs in {where} yet; a run starts when golden.jsonl is saved")
        return ref
    try:
        check_run_id(run)
    except StoreError as err:
        raise Refusal(400, str(err)) from err
    holders = [RunRef(run, name) for name, store in collection_stores(shelf, collection) if run in _ids(store)]
    if not holders:
        where = f"collection {shown(collection)}" if collection else "any collection"
        raise Refusal(404, f"no run {shown(run)} in {where}; GET {PREFIX}/v1/evaluations lists the runs")
    if len(holders) > 1:
        names = ", ".join(ref.collection for ref in holders)
        raise Refusal(409, f"run {shown(run)} is in more than one collection ({names}); add ?collection=NAME")
    return holders[0]


def _ids(store) -> list[str]:
    try:
        return store.ids()
    except StoreError as err:
        raise Refusal(503, str(err)) from err


def read_report(shelf: Collections, ref: RunRef) -> dict[str, Any]:
    """The run's report; ``Refusal`` 404 when it is kept but cannot be read, 503 when the store does not
    answer. Never a 500: a damaged file is kept data, named in the sentence, not a fault of the app."""
    try:
        return shelf.store(ref.collection).get(ref.run_id)
    except StoreError as err:
        raise store_refusal(ref, err) from err


def kept_page(store: RunStore, ref: RunRef) -> bytes | None:
    """The ``report.html`` kept beside the run; None when there is none, or when it cannot be read (the
    page is then drawn again from report.json, and the damaged one named in a logged warning)."""
    try:
        return store.page(ref.run_id)
    except DamagedFileError as err:
        log.warning("the kept page of run %s (%s) is passed over: %s", ref.run_id, ref.collection, err)
        return None
    except RunNotFoundError:  # no page, and no report file either: reading the report says which
        return None
    except StoreError as err:
        raise store_refusal(ref, err) from err


def store_refusal(ref: RunRef, err: StoreError) -> Refusal:
    """What a route answers when a run's kept files cannot be read (see ``read_report``)."""
    if isinstance(err, DamagedFileError):
        return Refusal(404, f"run {ref.run_id} of {ref.collection} is kept, but its report cannot be read: {err}; "
                            f"GET {PREFIX}/v1/evaluations lists the runs that can")
    if isinstance(err, RunNotFoundError):  # gone between the listing and the read
        return Refusal(404, str(err))
    return Refusal(503, f"the store of {ref.collection} did not answer: {err}")


def without_question_text(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with no question or reference text: reports saved before runs stopped keeping it have it,
    and these routes answer anyone who may read runs."""
    report = copy.deepcopy(report)
    for row in report.get("questions") or []:
        if isinstance(row, dict):
            for field in ("question", "reference", "evidence", "hint"):
                row.pop(field, None)
    return report


def runs_page(shelf: Collections, *, limit: int, offset: int, collection: str | None) -> dict[str, Any]:
    """A page of runs across collections, newest first, each with its collection and links."""
    refs = all_runs(shelf, collection)
    rows = []
    for ref in refs[offset:offset + limit]:
        row: dict[str, Any]
        try:
            row = history_row(shelf.store(ref.collection).report(ref.run_id))
        except StoreError as err:  # one unreadable report does not hide the others
            row = {"id": ref.run_id, "error": str(err)}
        rows.append({"collection": ref.collection, **row, "links": links(ref)})
    query = {"limit": limit, **({"collection": collection} if collection else {})}
    more = offset + limit < len(refs)
    return {"runs": rows, "total": len(refs), "limit": limit, "offset": offset,
            "next": f"{PREFIX}/v1/evaluations?{urlencode({**query, 'offset': offset + limit})}" if more else None}


def golden_download(caller: Caller, admin_role: str, ref: RunRef) -> dict[str, Any]:
    allowed, reason = caller.may_download_golden(admin_role)
    found = {"allowed": allowed, "reason": reason}
    if allowed:
        found["url"] = links(ref)["golden"]
    return found


def run_document(shelf: Collections, ref: RunRef, caller: Caller, admin_role: str) -> dict[str, Any]:
    """One run as the routes give it: the report (no question text), its collection, the missing
    documents in words, whether this caller may download its golden file, and links."""
    report = without_question_text(read_report(shelf, ref))
    notes = missing_notes(RunReport.from_json(report), limit=None)
    return {**report, "collection": ref.collection, "missing_notes": notes,
            "golden_download": golden_download(caller, admin_role, ref), "links": links(ref)}


@dataclass(frozen=True)
class GoldenFile:
    data: bytes
    sha256: str
    filename: str


def golden_file(shelf: Collections, ref: RunRef) -> GoldenFile:
    """The exact golden file the run read, as the store kept it; ``Refusal`` 404 when no copy was kept."""
    report = read_report(shelf, ref)
    sha256 = str((report.get("golden") or {}).get("sha256") or "")
    try:
        data = shelf.store(ref.collection).golden(sha256)
    except StoreError as err:
        raise Refusal(404, f"run {ref.run_id} of {ref.collection}: {err}") from err
    return GoldenFile(data=data, sha256=sha256, filename=f"{ref.collection}-golden-{sha256[:12]}.jsonl")
