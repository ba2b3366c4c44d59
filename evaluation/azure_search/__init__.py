"""Azure AI Search as a target: every setup an index can do, searched through ``azure-search-documents``.

The only package of the library that imports the Azure AI Search SDK, and only when a target is made
or searched: names load on first use, so ``import evaluation`` stays free of Azure modules.

    from evaluation.azure_search import AzureSearchTarget
    target = AzureSearchTarget.from_options("search", {"endpoint": "https://svc.search.windows.net",
                                                       "index": "docs-index"})
    print([s.key for s in target.setups()])

``options`` (the target spec), ``definition`` (what an index can do), ``setups`` (which setups, and
why others are left out), ``queries`` (the request for a setup) and ``filters`` (the missing-documents
lookup) are pure; ``service``, ``retry`` and ``vectors`` talk HTTP; ``target`` puts them together.
"""
from __future__ import annotations

from ..lazy import lazy_attributes

_LAZY = {
    "AzureSearchTarget": ".target", "SignIn": ".target",
    "AzureSearchOptions": ".options", "FieldNames": ".options", "AzureOpenAIEmbeddings": ".options",
    "IndexShape": ".definition", "LeftOut": ".index_setups",
}
__all__ = sorted(_LAZY)
__getattr__ = lazy_attributes(__name__, _LAZY)
