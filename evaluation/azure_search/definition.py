"""What an index can do, read from its definition (the REST JSON ``GET /indexes('<name>')`` returns).

``IndexShape.read`` keeps what deciding the setups needs: the key field, each field's attributes,
the vector fields (dimensions, profile, the vectorizer the profile names, the similarity metric of its
algorithm) and the semantic configurations. ``resolve_fields`` picks which fields hold a chunk's id,
document id, page and text: the configured names, checked against the index with a sentence naming
the fields it has, or defaults found by the usual names. Pure data: no SDK, no network.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import UsageError, did_you_mean
from .options import FieldNames

VECTOR_TYPES = ("Collection(Edm.Single)", "Collection(Edm.Half)", "Collection(Edm.Int16)",
                "Collection(Edm.SByte)", "Collection(Edm.Byte)")
TEXT_TYPES = ("Edm.String",)
PAGE_TYPES = ("Edm.Int32", "Edm.Int64", "Edm.String")
# Defaults, in order of preference: the names Azure's "import and vectorize data" wizard and the
# common RAG samples give these fields.
DOC_ID_NAMES = ("parent_id", "doc_id", "document_id", "parentId", "docId", "documentId")
PAGE_NAMES = ("page", "page_number", "pageNumber")
TEXT_NAMES = ("chunk", "content", "text", "chunk_text", "page_content")


@dataclass(frozen=True)
class IndexField:
    name: str
    type: str
    key: bool = False
    searchable: bool = False
    filterable: bool = False
    facetable: bool = False
    retrievable: bool = True


@dataclass(frozen=True)
class VectorField:
    name: str
    dimensions: int | None
    profile: str | None
    vectorizer: str | None        # the vectorizer the field's profile names, when the index defines it
    vectorizer_kind: str | None   # azureOpenAI, aml, customWebApi, aiServicesVision, ...
    metric: str | None            # cosine, euclidean, dotProduct, hamming (None: not stated)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dimensions": self.dimensions, "profile": self.profile,
                "vectorizer": self.vectorizer, "vectorizer_kind": self.vectorizer_kind, "metric": self.metric}


@dataclass(frozen=True)
class IndexShape:
    name: str
    fields: tuple[IndexField, ...]
    vector_fields: tuple[VectorField, ...]
    semantic_configurations: tuple[str, ...]
    default_semantic_configuration: str | None

    @property
    def key(self) -> str:
        return next(f.name for f in self.fields if f.key)

    def field(self, name: str) -> IndexField | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def searchable(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.searchable and f.type not in VECTOR_TYPES)

    @classmethod
    def read(cls, definition: Mapping[str, Any]) -> IndexShape:
        """The shape of an index definition (REST JSON). Sub-fields of complex fields are not read:
        none of the roles can live there."""
        raw_fields = definition.get("fields") or []
        fields = tuple(IndexField(
            name=f["name"], type=f.get("type", ""), key=bool(f.get("key")), searchable=bool(f.get("searchable")),
            filterable=bool(f.get("filterable")), facetable=bool(f.get("facetable")),
            # "retrievable" is returned by the service; older payloads say "hidden" (its inverse).
            retrievable=bool(f.get("retrievable", not f.get("hidden", False))))
            for f in raw_fields)
        if not any(f.key for f in fields):
            raise UsageError(f"index {definition.get('name')!r}: its definition names no key field")
        vector_search = definition.get("vectorSearch") or {}
        profiles = {p.get("name"): p for p in vector_search.get("profiles") or []}
        vectorizers = {v.get("name"): v for v in vector_search.get("vectorizers") or []}
        algorithms = {a.get("name"): a for a in vector_search.get("algorithms") or []}
        vectors = []
        for f in raw_fields:
            if f.get("type") not in VECTOR_TYPES:
                continue
            profile = profiles.get(f.get("vectorSearchProfile") or f.get("vectorSearchProfileName"))
            vectorizer_name = (profile or {}).get("vectorizer")
            vectorizer = vectorizers.get(vectorizer_name) if vectorizer_name else None
            algorithm = algorithms.get((profile or {}).get("algorithm")) or {}
            parameters = algorithm.get("hnswParameters") or algorithm.get("exhaustiveKnnParameters") or {}
            vectors.append(VectorField(
                name=f["name"], dimensions=f.get("dimensions"), profile=(profile or {}).get("name"),
                vectorizer=vectorizer_name if vectorizer else None,
                vectorizer_kind=(vectorizer or {}).get("kind"),
                metric=parameters.get("metric") or ("cosine" if algorithm else None)))
        semantic = definition.get("semantic") or {}
        configurations = tuple(c.get("name") for c in semantic.get("configurations") or [] if c.get("name"))
        return cls(name=str(definition.get("name", "")), fields=fields, vector_fields=tuple(vectors),
                   semantic_configurations=configurations,
                   default_semantic_configuration=semantic.get("defaultConfiguration"))


@dataclass(frozen=True)
class ResolvedFields:
    """The fields the target reads, all checked against the index."""

    id: str
    doc_id: str
    page: str | None
    text: str | None
    doc_id_filterable: bool
    doc_id_facetable: bool

    @property
    def select(self) -> list[str]:
        """What a search asks back: id, document id, and page and text when the index has them."""
        return list(dict.fromkeys(f for f in (self.id, self.doc_id, self.page, self.text) if f))

    def to_dict(self) -> dict[str, str | None]:
        return {"id": self.id, "doc_id": self.doc_id, "page": self.page, "text": self.text}


def resolve_fields(shape: IndexShape, configured: FieldNames, *, where: str) -> ResolvedFields:
    """The configured roles checked against the index; roles left out get defaults (id: the key field;
    doc_id: parent_id, doc_id, ... else the key, one index document per document; page and text: the
    usual names, else none). A ``UsageError`` names the fields the index has."""
    def check(role: str, name: str, types: Sequence[str]) -> str:
        found = shape.field(name)
        names = [f.name for f in shape.fields]
        if found is None:
            raise UsageError(f'{where}: fields.{role} is "{name}", which index {shape.name} does not have.'
                             f"{did_you_mean(name, names)} Its fields: {', '.join(names)}")
        if found.type not in types:
            raise UsageError(f'{where}: fields.{role} "{name}" is {found.type} in index {shape.name}; '
                             f"{role} needs {' or '.join(types)}")
        if not found.retrievable:
            raise UsageError(f'{where}: fields.{role} "{name}" is not retrievable in index {shape.name}: '
                             "make it retrievable or name another field")
        return name

    def default(names: Sequence[str], types: Sequence[str]) -> str | None:
        return next((n for n in names if (f := shape.field(n)) is not None and f.type in types and f.retrievable),
                    None)

    key = shape.key
    identifier = check("id", configured.id, TEXT_TYPES) if configured.id else key
    doc_id = (check("doc_id", configured.doc_id, TEXT_TYPES) if configured.doc_id
              else default(DOC_ID_NAMES, TEXT_TYPES) or key)
    page = check("page", configured.page, PAGE_TYPES) if configured.page else default(PAGE_NAMES, PAGE_TYPES)
    text = check("text", configured.text, TEXT_TYPES) if configured.text else default(TEXT_NAMES, TEXT_TYPES)
    doc_field = shape.field(doc_id)
    return ResolvedFields(id=identifier, doc_id=doc_id, page=page, text=text,
                          doc_id_filterable=bool(doc_field and doc_field.filterable),
                          doc_id_facetable=bool(doc_field and doc_field.facetable))


def choose_semantic_configuration(shape: IndexShape, wanted: str | None, *, where: str) -> str | None:
    """The semantic configuration the semantic setups use: the one named, else the index's default,
    else its only (or first) one; None when the index has none."""
    if wanted is not None:
        if wanted not in shape.semantic_configurations:
            have = ", ".join(shape.semantic_configurations) or "none"
            raise UsageError(f'{where}: semantic_configuration "{wanted}" is not in index {shape.name}.'
                             f"{did_you_mean(wanted, shape.semantic_configurations)} It has: {have}")
        return wanted
    if shape.default_semantic_configuration in shape.semantic_configurations:
        return shape.default_semantic_configuration
    return shape.semantic_configurations[0] if shape.semantic_configurations else None


# -- a semantic configuration, added where semantic ranking is asked for ------------------------------

TITLE_NAMES = ("title", "Title", "heading", "header", "section_title", "sectionTitle", "name")
DEFAULT_SEMANTIC_NAME = "default"


def semantic_configuration_for(shape: IndexShape, fields: ResolvedFields, *,
                               name: str = DEFAULT_SEMANTIC_NAME) -> dict[str, Any] | None:
    """The semantic configuration to add to an index (REST JSON, ``semantic.configurations[]``): its title
    field, a searchable string named like a title (none when it has no such field: the title is
    optional), its content field, the target's text field when searchable, else the first searchable
    string that is neither the key nor the title, and no keyword fields. None when the index has no
    searchable string to rank by: the ranker reads those fields' text, so there is nothing to add."""
    def ranked_text(field: IndexField | None) -> bool:
        return field is not None and field.type in TEXT_TYPES and field.searchable and field.retrievable

    title = next((n for n in TITLE_NAMES if ranked_text(shape.field(n))), None)
    content = fields.text if fields.text and ranked_text(shape.field(fields.text)) else next(
        (f.name for f in shape.fields if ranked_text(f) and not f.key and f.name != title), None)
    if content is None:
        return None
    prioritized: dict[str, Any] = {"titleField": {"fieldName": title}} if title else {}
    prioritized.update({"prioritizedContentFields": [{"fieldName": content}], "prioritizedKeywordsFields": []})
    return {"name": name, "prioritizedFields": prioritized}


def with_semantic_configuration(definition: Mapping[str, Any], configuration: Mapping[str, Any]) -> dict[str, Any]:
    """The index definition to PUT back: ``definition`` as read (without its ``@odata`` annotations) with
    ``configuration`` added to its semantic configurations, made the default when it had none. A
    configuration it has, made here or in the portal, is kept as it is."""
    body = {k: v for k, v in definition.items() if not k.startswith("@odata.")}
    semantic = dict(body.get("semantic") or {})
    semantic["configurations"] = [*(semantic.get("configurations") or []), dict(configuration)]
    semantic["defaultConfiguration"] = semantic.get("defaultConfiguration") or configuration["name"]
    body["semantic"] = semantic
    return body
