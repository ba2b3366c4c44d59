"""The library's exceptions live in ``errors.py`` under one naming rule (``...Error``, a warning ``...Warning``),
and every name from before the rule is still the same class, where it was."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import evaluation
from evaluation import errors
from test_old_names import OLD

OLD_ADDRESSES = tuple(OLD)  # the library's old module names: they define nothing, and warn when imported
# Exceptions that may stay beside their code, each with why: private, and never met by a caller.
PRIVATE = {
    "evaluation.store.checks.Bad": "a field check's sentence; checks.problem turns it into the sentence a "
                                   "DamagedFileError or a warning carries, so it never leaves the store's readers",
}
# name before the rule -> (where it was importable, the class it is now)
OLD_NAMES = {
    "RunNotFound": (("evaluation", "evaluation.errors", "evaluation.store"), "RunNotFoundError"),
    "GoldenNotKept": (("evaluation", "evaluation.errors", "evaluation.store"), "GoldenNotKeptError"),
    "WrongArgument": (("evaluation", "evaluation.errors"), "WrongArgumentError"),
    "WrongValue": (("evaluation", "evaluation.errors"), "WrongValueError"),
    "WriterUnavailable": (("evaluation", "evaluation.errors", "evaluation.golden.writing"), "WriterUnavailableError"),
    "DamagedFile": (("evaluation.errors",), "DamagedFileError"),
    "BlobTooLarge": (("evaluation.errors", "evaluation.store.blob"), "BlobTooLargeError"),
    "NotAFile": (("evaluation.errors", "evaluation.files"), "NotAFileError"),
    "CacheDamaged": (("evaluation.errors", "evaluation.engine.shared_cache"), "CacheDamagedError"),
    "JsonLineError": (("evaluation.errors", "evaluation.jsonl"), "JsonLineError"),
    "BuildKeyError": (("evaluation.errors", "evaluation.chunking", "evaluation.chunking.keys"), "BuildKeyError"),
}


def library_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(evaluation.__path__, "evaluation.")
            if m.name not in OLD_ADDRESSES and m.name != "evaluation.__main__"]


def exceptions_defined_in(module_name: str) -> list[str]:
    """``module.Class`` for every exception class ``module_name`` defines itself (not ones it imports)."""
    module = importlib.import_module(module_name)
    return [f"{module_name}.{name}" for name, value in vars(module).items()
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module_name
            and value.__name__ == name]


def breaks_the_rule(cls: type) -> bool:
    wanted = "Warning" if issubclass(cls, Warning) else "Error"
    return not cls.__name__.endswith(wanted)


def test_every_exception_of_the_library_is_defined_in_errors_py():
    outside = sorted(name for module in library_modules() if module != "evaluation.errors"
                     for name in exceptions_defined_in(module) if name not in PRIVATE)
    assert outside == [], "define these in evaluation/errors.py (keep the old place importing it):\n" + \
        "\n".join(outside)


def test_every_exception_in_errors_py_is_named_by_the_rule():
    defined = [getattr(errors, name.rsplit(".", 1)[1]) for name in exceptions_defined_in("evaluation.errors")]
    assert len(defined) > 20
    assert [cls.__name__ for cls in defined if breaks_the_rule(cls)] == []


def test_the_rule_check_catches_a_name_without_its_suffix():
    class RunMissing(errors.StoreError):
        pass

    class Lost(UserWarning):
        pass

    assert breaks_the_rule(RunMissing) and breaks_the_rule(Lost)
    assert not breaks_the_rule(errors.RunNotFoundError) and not breaks_the_rule(errors.MissingDocumentsWarning)


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_a_name_from_before_the_rule_is_the_same_class_where_it_was(old):
    places, new = OLD_NAMES[old]
    for place in places:
        assert getattr(importlib.import_module(place), old) is getattr(errors, new), f"{place}.{old}"


def test_an_old_name_still_catches_what_the_library_raises(tmp_path):
    from evaluation.store import open_store

    with pytest.raises(evaluation.RunNotFound) as caught:
        open_store(tmp_path).get("no-such-run")
    assert type(caught.value).__name__ == "RunNotFoundError" and isinstance(caught.value, KeyError)
