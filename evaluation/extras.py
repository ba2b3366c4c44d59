"""The optional parts of the package: what a plain ``pip install retrieval-evaluation`` leaves out, and the
sentence a user gets when a command needs one of them.

The library and the command line run locally on the embedded engine with a folder store and no cloud
SDK: the Azure SDKs (an Azure AI Search target, a Blob store or golden file, Azure OpenAI with a managed
identity) are the ``azure`` extra and boto3 (S3 stores and golden files) the ``s3`` extra of
pyproject.toml; the Function App's requirements.txt installs both. Each import of those SDKs sits inside
the function that needs it, under ``needs``, so a missing one is a sentence with the install line instead
of a ModuleNotFoundError three modules deep.

Bottom layer (beside ``errors``): the store and the Azure adapters use it.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from .errors import EvaluationError, UsageError

PACKAGE = "retrieval-evaluation"
# extra -> (the top-level modules it provides, what a sentence calls them)
EXTRAS = {"azure": (("azure", "msal"), "Azure SDK packages"), "s3": (("boto3", "botocore"), "boto3 package")}


def install_line(extra: str) -> str:
    """``pip install 'retrieval-evaluation[azure]'``: how to add the extra."""
    return f"pip install '{PACKAGE}[{extra}]'"


@contextlib.contextmanager
def needs(extra: str, what: str, error: type[EvaluationError] = UsageError) -> Iterator[None]:
    """Run the block; a ``ModuleNotFoundError`` for a module of ``extra`` becomes ``error`` saying that
    ``what`` (``"an Azure AI Search target"``) needs it and how to install it. Any other failure passes."""
    modules, label = EXTRAS[extra]
    try:
        yield
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] not in modules:
            raise
        raise error(f"{what} needs the {label}, which a plain `pip install {PACKAGE}` leaves out; install them "
                    f"with: {install_line(extra)} (the Function App's requirements.txt has them)") from err
