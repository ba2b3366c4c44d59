"""Bearer tokens for Azure OpenAI from a managed identity: the chat route's only Azure SDK import.

Like ``store/blob.py`` for Blob storage, this module keeps ``azure.identity`` and ``azure.core`` out of
the rest of the library and imports them inside its function, so ``import evaluation`` stays light.
Azure's exceptions stop here: a credential that cannot get a token becomes ``error`` (the judge's
``AnswerError``, the writer's ``WriterUnavailableError``) naming the fix.
"""
from __future__ import annotations

from typing import Callable

from .errors import AnswerError, EvaluationError
from .extras import needs


def bearer_token_provider(scope: str, client_id: str | None = None, *, who: str = "the judge",
                          error: type[EvaluationError] = AnswerError) -> Callable[[], str]:
    """A callable giving a current token for ``scope`` (refreshed before it expires, by azure-identity).

    ``client_id`` names a user-assigned managed identity; without it ``DefaultAzureCredential`` is used
    (the app's managed identity in Azure, the developer's sign-in on a workstation). ``who`` is what the
    token is for, in the sentence a failure becomes.
    """
    with needs("azure", f"a managed identity for {who}", error):
        from azure.core.exceptions import ClientAuthenticationError
        from azure.identity import DefaultAzureCredential, ManagedIdentityCredential, get_bearer_token_provider

    credential = ManagedIdentityCredential(client_id=client_id) if client_id else DefaultAzureCredential()
    provider = get_bearer_token_provider(credential, scope)

    def token() -> str:
        try:
            return provider()
        except ClientAuthenticationError as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise error(f"could not get a token for {who} with the managed identity ({first}); in Azure, "
                        "give the app an identity with the Cognitive Services OpenAI User role; locally, "
                        "sign in with `az login`, or use a key") from err

    return token
