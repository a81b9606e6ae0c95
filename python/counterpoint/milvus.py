"""counterpoint.milvus: two-stage contradiction search with Milvus holding the corpus.

Stage 1 is an ordinary top-K by cosine on E, so it runs in Milvus; stage 2 needs only the Es rows
of those K candidates, which Milvus returns as output fields of the same search call. The rerank
itself is the library's (counterpoint.rerank): the same kernels, final score, order, ties and
exclusion rule as Index.search.

    import counterpoint as cp, counterpoint.milvus as cpm
    client = cpm.connect("contradictions.db")         # a pymilvus.MilvusClient: Milvus Lite, a local file
    # client = cpm.connect("http://milvus:19530")      # the same code against a Milvus server
    cpm.export(index, client, "sick")                  # resumable, replaces rows that differ from the index;
                                                       # refuses another encoder's collection
    retriever = cpm.MilvusRetriever(client, "sick", encoder=enc, sparse_encoder=es)
    hits = retriever.search(["A man is not playing a guitar"], k=10, scorer="hoyer")

A collection holds one entity per document: id (VARCHAR primary key), text (VARCHAR), e
(FLOAT_VECTOR, normalised E rows) and es (FLOAT_VECTOR or FLOAT16_VECTOR Es rows), and records
in its description which encoders made the rows, their widths and the layout version.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from . import _core

FORMAT = "counterpoint.milvus/1"
ID, TEXT, E, ES = "id", "text", "e", "es"
# Milvus's limits: VARCHAR fields hold at most 65,535 bytes; one search returns at most 16,384 hits.
MAX_VARCHAR_BYTES = 65535
MAX_TOP_K = 16384
# Milvus's rule for collection names (checked here so that a bad one is named before any round trip).
MAX_COLLECTION_NAME = 255
_COLLECTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# URI schemes pymilvus sends to a server; any other URI is a Milvus Lite file (pymilvus's own rule).
_SERVER_SCHEMES = ("unix", "http", "https", "tcp", "grpc")
# Every Milvus Lite file is an SQLite database holding this table (milvus-lite 2.5, pinned).
_SQLITE_HEADER = b"SQLite format 3\x00"
_MILVUS_LITE_TABLE = "collection_meta"
# Milvus's error code for a parameter it refuses (merr.ErrParameterInvalid).
_MILVUS_INVALID_PARAMETER = 1100
# Search defaults are the library's (counterpoint.SearchOptions), as in Index.search.
_DEFAULTS = _core.SearchOptions()


def _pymilvus():
    try:
        import pymilvus
    except ImportError as error:  # pragma: no cover - the project's set-up installs it
        raise ImportError("counterpoint.milvus needs pymilvus (and milvus-lite for local files): "
                          "./setup.sh build installs the pinned versions of python/requirements-milvus.txt") from error
    return pymilvus


def check_collection_name(name, what: str = "collection") -> str:
    """`name` when Milvus accepts it as a collection name, else ValueError (TypeError for a non-str)
    naming `what` (the argument or flag that gave it) and the rule: first a letter or an underscore,
    then letters, digits and underscores, at most 255 of them."""
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str (a Milvus collection name), got {type(name).__name__}")
    if _COLLECTION_NAME.fullmatch(name) and len(name) <= MAX_COLLECTION_NAME:
        return name
    if not name:
        why = "it is empty"
    elif len(name) > MAX_COLLECTION_NAME:
        why = f"it is {len(name)} characters long"
    else:
        position = next(i for i, c in enumerate(name) if not _COLLECTION_NAME.fullmatch(name[:i + 1]))
        why = f"it has {name[position]!r} at position {position + 1}"
    raise ValueError(f"{what} {name!r} is not a Milvus collection name: {why}; a name starts with a letter or an "
                     f"underscore and holds only letters, digits and underscores, at most {MAX_COLLECTION_NAME}")


@contextlib.contextmanager
def _in_user_terms(doing: str) -> Iterator[None]:
    """Re-raises pymilvus's exceptions as the project's kinds, saying what the caller was `doing`:
    an argument Milvus refuses is a ValueError, a Milvus that cannot be reached a ConnectionError
    (an OSError), anything else Milvus reports a RuntimeError; the pymilvus exception is the cause."""
    exceptions = _pymilvus().exceptions
    try:
        yield
    except exceptions.MilvusException as error:
        unreachable = (exceptions.ConnectError, exceptions.MilvusUnavailableException,
                       exceptions.ConnectionNotExistException, exceptions.ConnectionConfigException)
        refused_argument = (exceptions.ParamError, exceptions.DataTypeNotMatchException,
                            exceptions.DataNotMatchException, exceptions.DataTypeNotSupportException,
                            exceptions.PrimaryKeyException, exceptions.FieldTypeException,
                            exceptions.FieldsTypeException, exceptions.InvalidConsistencyLevel)
        kind = (ConnectionError if isinstance(error, unreachable) else
                ValueError if isinstance(error, refused_argument) or error.code == _MILVUS_INVALID_PARAMETER else
                RuntimeError)
        raise kind(f"Milvus refused {doing}: {error.message or error}") from error


def _local_file(uri: str) -> bool:
    from urllib.parse import urlparse
    return urlparse(uri).scheme.lower() not in _SERVER_SCHEMES


def _why_not_milvus_lite(path: str) -> str:
    """Why the file at `path` is not a Milvus Lite database ("" when it is one, is empty, or cannot be
    told): milvus-lite reports such a file only as unopenable, and writes its tables into another
    application's SQLite database."""
    if os.path.isdir(path):
        return "it is a folder, not a Milvus Lite file"
    try:
        with open(path, "rb") as file:
            head = file.read(len(_SQLITE_HEADER))
    except OSError:
        return ""  # milvus-lite reports what it cannot read
    if not head:
        return ""  # Milvus Lite makes an empty file its database
    if head != _SQLITE_HEADER:
        return (f"the file is not a Milvus Lite database (it starts {head[:16]!r}; a Milvus Lite file is an SQLite "
                "database)")
    import sqlite3
    from urllib.parse import quote
    try:
        with contextlib.closing(sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)) as db:
            tables = sorted(row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    except sqlite3.Error:
        return ""  # locked by the Milvus Lite that holds it, or damaged: milvus-lite says which
    if tables and _MILVUS_LITE_TABLE not in tables:
        return (f"the file is an SQLite database of another application (its tables: {', '.join(tables[:5])}), not a "
                "Milvus Lite database")
    return ""


def connect(uri: str):
    """A pymilvus.MilvusClient for `uri` (a Milvus Lite file, created if missing, or a server URI),
    refusing a file that is not a Milvus Lite database before milvus-lite opens it (ValueError) and
    saying why a Milvus could not be opened (ConnectionError)."""
    uri = _core._path_argument(uri, "uri")  # str, bytes or os.PathLike, as every path argument; a NUL refused
    if not uri:
        raise ValueError("uri is empty: give a Milvus Lite file (*.db) or a server URI (http://host:19530)")
    if _local_file(uri):
        why = _why_not_milvus_lite(uri) if os.path.exists(uri) else ""
        if why:
            raise ValueError(f"cannot open Milvus at {uri}: {why}")
    pymilvus = _pymilvus()
    try:
        return pymilvus.MilvusClient(uri)
    except pymilvus.exceptions.MilvusException as error:  # a folder that does not exist, a server that does not answer
        raise ConnectionError(f"cannot open Milvus at {uri}: {_why_unopened(uri, error.message)}") from error


@dataclass(frozen=True)
class CollectionInfo:
    """What a counterpoint collection records about its rows (its schema description)."""

    encoder_id: str
    sparse_encoder_id: str
    dim: int
    sparse_dim: int
    sparse_dtype: Optional[str]  # "float32", "float16" or None without Es
    # Encoder.settings of the models (JSON text; "" in collections written before they were recorded):
    # what lets a refusal name the setting that differs.
    encoder_settings: str = ""
    sparse_encoder_settings: str = ""

    def to_json(self) -> str:
        record = {"format": FORMAT, "encoder_id": self.encoder_id, "sparse_encoder_id": self.sparse_encoder_id,
                  "dim": self.dim, "sparse_dim": self.sparse_dim, "sparse_dtype": self.sparse_dtype}
        for field in ("encoder_settings", "sparse_encoder_settings"):
            if getattr(self, field):
                record[field] = getattr(self, field)
        return json.dumps(record, sort_keys=True)

    @staticmethod
    def of_collection(client, collection: str) -> "CollectionInfo":
        """What `collection` records, after checking that its fields are the ones export() makes for
        such rows: ValueError naming what differs (or that it is missing, or not counterpoint's)."""
        return _read_collection(client, collection)[0]

    @staticmethod
    def _of_description(collection: str, description: str) -> "CollectionInfo":
        try:
            record = json.loads(description)
        except (TypeError, ValueError):
            record = None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise ValueError(f"collection '{collection}' was not written by counterpoint.milvus "
                             f"(its description is {description[:120]!r}, expected a {FORMAT} record)")
        try:
            info = CollectionInfo(str(record["encoder_id"]), str(record["sparse_encoder_id"]), int(record["dim"]),
                                  int(record["sparse_dim"]), record["sparse_dtype"],
                                  str(record.get("encoder_settings", "")),
                                  str(record.get("sparse_encoder_settings", "")))
        except (KeyError, TypeError, ValueError) as error:
            missing = f"lacks {error}" if isinstance(error, KeyError) else f"has a field of the wrong type ({error})"
            raise ValueError(f"collection '{collection}' has a damaged {FORMAT} description: it {missing} "
                             f"(its description is {description[:120]!r}); drop it and export again") from None
        if info.sparse_dtype not in (None, "float32", "float16"):
            raise ValueError(f"collection '{collection}' has a damaged {FORMAT} description: sparse_dtype "
                             f"{info.sparse_dtype!r}; drop it and export again")
        return info

    def check_matches(self, other: "CollectionInfo", collection: str) -> None:
        """ValueError naming both sides when `other` (an index's rows) is not what the collection holds."""
        for field in ("encoder_id", "sparse_encoder_id", "dim", "sparse_dim", "sparse_dtype"):
            mine, theirs = getattr(self, field), getattr(other, field)
            if mine != theirs and not (field.endswith("encoder_id") and _recorded_before_settings(mine, theirs)):
                raise ValueError(f"collection '{collection}' holds rows with {field} {mine!r}, the index "
                                 f"{theirs!r}: export into another collection, or drop this one first")


def _read_collection(client, collection: str) -> Tuple[CollectionInfo, Dict[str, dict]]:
    """The CollectionInfo of `collection` and its fields by name, its schema checked against what its
    description records (a description copied onto another schema would make Milvus refuse the
    queries with its own words, an "Invalid expr")."""
    check_collection_name(collection)
    with _in_user_terms(f"a description of collection '{collection}'"):
        if not client.has_collection(collection):
            raise ValueError(f"Milvus has no collection '{collection}' (export an index into it first: "
                             "counterpoint.milvus.export)")
        described = client.describe_collection(collection)
    info = CollectionInfo._of_description(collection, described.get("description", ""))
    fields = {field["name"]: field for field in described.get("fields", [])}
    why = _schema_mismatch(described, fields, info)
    if why:
        raise ValueError(f"collection '{collection}' has a {FORMAT} description but not the fields export() makes: "
                         f"{why}; drop it and export again")
    return info, fields


def _schema_mismatch(described: Dict[str, Any], fields: Dict[str, dict], info: CollectionInfo) -> str:
    """What differs between a collection's fields and those export() makes for `info` ("" when none)."""
    DataType = _pymilvus().DataType
    wanted = {ID: (DataType.VARCHAR, None), TEXT: (DataType.VARCHAR, None), E: (DataType.FLOAT_VECTOR, info.dim)}
    if info.sparse_dim:
        wanted[ES] = (DataType.FLOAT16_VECTOR if info.sparse_dtype == "float16" else DataType.FLOAT_VECTOR,
                      info.sparse_dim)

    def kind(data_type, dim) -> str:
        name = getattr(data_type, "name", str(data_type))
        return f"{name} of dim {dim}" if dim is not None else name

    for name, (data_type, dim) in wanted.items():
        field = fields.get(name)
        if field is None:
            return f"it has no field '{name}' ({kind(data_type, dim)})"
        params = field.get("params") or {}
        has_dim = params.get("dim") if dim is not None else None
        if field.get("type") != data_type or (dim is not None and str(has_dim) != str(dim)):
            return f"its field '{name}' is {kind(field.get('type'), has_dim)}, not {kind(data_type, dim)}"
    primary = [name for name, field in fields.items() if field.get("is_primary")]
    if primary != [ID]:
        return f"its primary key is {', '.join(repr(p) for p in primary) or 'none'}, not '{ID}'"
    if described.get("auto_id"):
        return "Milvus generates its primary keys (auto_id), where export() gives the document ids"
    extra = [name for name in fields if name not in wanted]
    if extra:
        return f"it has fields export() does not write ({', '.join(repr(e) for e in extra)})"
    return ""


def _recorded_before_settings(collection_id: str, index_id: str) -> bool:
    """True when a collection written before identities covered the settings ("name@weights[+head]")
    holds rows of the same weights as the index ("name@weights[+head]#settings"): exports go on into it."""
    return "@" in collection_id and "#" not in collection_id.rpartition("@")[2] and \
        index_id.startswith(collection_id + "#")


def _info_of_index(index, sparse_dtype: Optional[str]) -> CollectionInfo:
    stored = index.sparse_dtype
    if sparse_dtype is not None and stored is None:
        raise ValueError("sparse_dtype given, but the index stores no Es rows")
    if sparse_dtype not in (None, "float32", "float16"):
        raise ValueError(f"sparse_dtype must be 'float32' or 'float16', got {sparse_dtype!r}")
    return CollectionInfo(index.encoder_id, index.sparse_encoder_id, int(index.dim), int(index.sparse_dim),
                          sparse_dtype or stored, index.encoder_settings, index.sparse_encoder_settings)


def _create_collection(client, collection: str, info: CollectionInfo, index_type: str, index_params: Dict,
                       consistency_level: str, shards: Optional[int]):
    DataType = _pymilvus().DataType
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False, description=info.to_json())
    # The longest values Milvus allows: VARCHAR stores each value at its own length, and a later
    # export of a rebuilt index (longer texts under the same ids) can then replace the rows.
    schema.add_field(ID, DataType.VARCHAR, is_primary=True, max_length=MAX_VARCHAR_BYTES)
    schema.add_field(TEXT, DataType.VARCHAR, max_length=MAX_VARCHAR_BYTES)
    schema.add_field(E, DataType.FLOAT_VECTOR, dim=info.dim)
    if info.sparse_dim:
        sparse_type = DataType.FLOAT16_VECTOR if info.sparse_dtype == "float16" else DataType.FLOAT_VECTOR
        schema.add_field(ES, sparse_type, dim=info.sparse_dim)
    indexes = client.prepare_index_params()
    indexes.add_index(E, index_type=index_type, metric_type="COSINE", params=index_params)
    if info.sparse_dim:
        # Milvus requires an index on every vector field before it loads a collection; Es is only
        # ever read back, so the cheapest one.
        indexes.add_index(ES, index_type="FLAT", metric_type="L2")
    extra = {} if shards is None else {"num_shards": shards}
    try:
        client.create_collection(collection, schema=schema, index_params=indexes,
                                 consistency_level=consistency_level, **extra)
    except _pymilvus().exceptions.MilvusException:
        # Milvus makes the collection before its indexes: an index it refuses (a type it lacks) would
        # leave an empty collection without one, which the next export would take for its own.
        if client.has_collection(collection):
            client.drop_collection(collection)
        raise


def _why_unopened(uri: str, message: str) -> str:
    """Milvus Lite's "Open local milvus failed" in the user's terms where the cause is known."""
    if _local_file(uri) and os.path.isfile(uri) and "Open local milvus failed" in message:
        return (f"{message}: another process has this Milvus Lite file open (Milvus Lite serves one process per "
                "file); run the exports one after another (an interrupted export resumes), or use a Milvus server "
                "for concurrent writers")
    return message


class ExtraDocumentsWarning(UserWarning):
    """export() found documents in the collection that the index does not hold, and kept them."""


class ExportCounts(int):
    """What export() did. As an int: how many entities it wrote (inserted or replaced). Its parts:
    inserted (documents new to the collection), replaced (documents whose text or vectors in the
    collection differed from the index's), unchanged (already there as the index has them), extra
    (ids the collection holds that the index does not) and removed (how many of those it deleted)."""

    def __new__(cls, inserted: int, replaced: int, unchanged: int, extra: Sequence[str], removed: int):
        counts = super().__new__(cls, inserted + replaced)
        counts.inserted, counts.replaced, counts.unchanged = inserted, replaced, unchanged
        counts.extra, counts.removed = tuple(extra), removed
        return counts

    def __str__(self) -> str:
        return str(int(self))

    def __repr__(self) -> str:
        return (f"ExportCounts(inserted={self.inserted}, replaced={self.replaced}, unchanged={self.unchanged}, "
                f"extra={len(self.extra)} ids, removed={self.removed})")


def export(index, client, collection: str, *, batch_size: int = 1000, sparse_dtype: Optional[str] = None,
           index_type: str = "FLAT", index_params: Optional[Dict[str, Any]] = None,
           consistency_level: str = "Strong", shards: Optional[int] = None, prune: bool = False,
           progress: bool = True) -> ExportCounts:
    """Writes the documents of `index` (ids, texts, E rows, Es rows) into Milvus collection
    `collection`, in batches of `batch_size`, so that it holds each document as the index does.
    Returns ExportCounts: an int, how many entities it wrote, with what it found.

    Resumable and repeatable: a document already in the collection with the index's text and rows
    is left as it is, so an export that stopped (an error, Ctrl-C) continues where it stopped and no
    document is written twice; one whose text or rows differ (an index rebuilt from other texts
    under the same ids) is replaced. Documents the collection holds and the index does not are
    kept with an ExtraDocumentsWarning naming them (a collection may gather several indexes), or
    deleted with prune=True. A collection made from other encoders, widths or Es storage, or whose
    fields are not export()'s, is refused with both sides named.

    Arguments:
        index: a counterpoint.Index (any kind: its stored rows are exported).
        client: a pymilvus.MilvusClient (Milvus Lite file or server URI; see connect()).
        collection: the collection's name (Milvus's rule: a letter or underscore, then letters,
            digits and underscores, at most 255).
        sparse_dtype: how Milvus stores Es: "float32" (FLOAT_VECTOR) or "float16"
            (FLOAT16_VECTOR, half the bytes); None = as the index stores it.
        index_type, index_params: Milvus's index on E (COSINE): "FLAT" or "IVF_FLAT" in Milvus Lite,
            "HNSW" / "IVF_FLAT" / ... on a server, e.g. index_params={"nlist": 1024}. Milvus Lite 2.5
            accepts IVF_FLAT but never builds it: it searches small collections exhaustively and
            large ones through its own interim index, ignoring nlist and nprobe (docs/RESULTS.md).
        consistency_level: "Strong" (searches see every finished insert) or Milvus's "Bounded" /
            "Session" / "Eventually" for throughput at cluster scale.
        shards: the collection's shard count on a server (None = Milvus's default).
        prune: delete the collection's documents that the index does not hold.
        progress: a tqdm bar over the documents.

    Errors Milvus reports come as ValueError (an argument it refuses), ConnectionError (it cannot be
    reached) or RuntimeError, saying which collection, with pymilvus's exception as the cause.
    """
    check_collection_name(collection)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    info = _info_of_index(index, sparse_dtype)
    if not info.encoder_id:
        raise ValueError("the index records no encoder identity (built by an older version): rebuild it so the "
                         "collection can refuse queries of other models")
    ids = index.ids()
    longest = {"id": max((len(i.encode("utf-8")) for i in ids), default=1),
               "text": max((len(index.text(i).encode("utf-8")) for i in ids), default=1)}
    with _in_user_terms(f"the export into collection '{collection}'"):
        exists = client.has_collection(collection)
        if exists:
            held_info, fields = _read_collection(client, collection)
            held_info.check_matches(info, collection)
            limits = {what: int((fields[name].get("params") or {}).get("max_length", MAX_VARCHAR_BYTES))
                      for what, name in (("id", ID), ("text", TEXT))}
        else:
            limits = {"id": MAX_VARCHAR_BYTES, "text": MAX_VARCHAR_BYTES}
        for what, size in longest.items():
            if size > limits[what]:
                # Milvus Lite stores a longer value anyway; a server refuses the batch. (Collections made
                # by earlier versions sized these fields to the longest values of their first index.)
                raise ValueError(f"a document {what} is {size} bytes long; " + (
                    f"collection '{collection}' holds {what}s of at most {limits[what]} bytes (set when it was "
                    "made): export into another collection, or drop this one first" if exists else
                    f"Milvus VARCHAR fields hold at most {MAX_VARCHAR_BYTES}"))
        if exists:
            client.load_collection(collection)
        else:
            _create_collection(client, collection, info, index_type, index_params or {}, consistency_level, shards)
        counts = _write_rows(index, client, collection, ids, info, batch_size,
                             _count(client, collection) if exists else 0, progress)
        extra = counts.pop("extra")
        removed = 0
        if extra and prune:
            for start in range(0, len(extra), batch_size):
                client.delete(collection, ids=extra[start:start + batch_size])
            removed = len(extra)
        elif extra:
            warnings.warn(f"collection '{collection}' holds {len(extra)} documents the index does not "
                          f"({_some(extra)}): kept; export(..., prune=True) deletes them", ExtraDocumentsWarning,
                          stacklevel=2)
        client.flush(collection)
        client.load_collection(collection)
    return ExportCounts(extra=extra, removed=removed, **counts)


def _write_rows(index, client, collection: str, ids: List[str], info: CollectionInfo, batch_size: int,
                held: int, progress: bool) -> Dict[str, Any]:
    """Inserts the documents the collection lacks and replaces those it holds otherwise, in slot
    order; the counts of each, and the ids of the `held` rows that no document of the index matched."""
    bar = _core.ProgressLine(f"export to {collection}") if progress else None
    inserted = replaced = unchanged = 0
    unmatched = held  # rows of the collection not yet matched to a document of the index
    fetched = [TEXT, E] + ([ES] if info.sparse_dim else [])
    try:
        for start in range(0, len(ids), batch_size):
            rows = _entities(index, ids[start:start + batch_size], info)
            # Once every row the collection held is matched, the rest of the index is new to it.
            stored = {} if unmatched <= 0 else {
                row[ID]: row for row in client.get(collection, ids=[row[ID] for row in rows], output_fields=fetched,
                                                   consistency_level="Strong")}
            unmatched -= len(stored)
            fresh = [row for row in rows if row[ID] not in stored]
            stale = [row for row in rows if row[ID] in stored and not _same_row(stored[row[ID]], row, info)]
            if fresh:
                client.insert(collection, fresh)
                inserted += len(fresh)
            if stale:
                client.upsert(collection, stale)
                replaced += len(stale)
            unchanged += len(stored) - len(stale)
            if bar is not None:
                bar.update(min(start + batch_size, len(ids)), len(ids))
    finally:
        if bar is not None:
            bar.close()
    extra = _ids_not_in(client, collection, set(ids)) if unmatched > 0 else []
    return {"inserted": inserted, "replaced": replaced, "unchanged": unchanged, "extra": extra}


def _same_row(stored: Dict[str, Any], row: Dict[str, Any], info: CollectionInfo) -> bool:
    """Whether a row read back from Milvus holds the text and the exact vectors of the index's row."""
    if stored[TEXT] != row[TEXT] or not np.array_equal(np.asarray(stored[E], dtype=np.float32), row[E]):
        return False
    if ES not in row:
        return True
    held = (np.frombuffer(_half_bytes(stored[ES]), dtype=np.float16) if info.sparse_dtype == "float16"
            else np.asarray(stored[ES], dtype=np.float32))
    return np.array_equal(held, row[ES])


def _ids_not_in(client, collection: str, ids: set) -> List[str]:
    """The ids `collection` holds that are not in `ids`, sorted (a pass over all of its ids)."""
    pages = client.query_iterator(collection, batch_size=4096, filter="", output_fields=[ID])
    found = set()
    try:
        page = pages.next()
        while page:
            found.update(row[ID] for row in page if row[ID] not in ids)
            page = pages.next()
    finally:
        pages.close()
    return sorted(found)


def _count(client, collection: str) -> int:
    rows = client.query(collection, filter="", output_fields=["count(*)"], consistency_level="Strong")
    return int(rows[0]["count(*)"])


def _some(ids: Sequence[str], shown: int = 3) -> str:
    return ", ".join(repr(i) for i in ids[:shown]) + (f", ... ({len(ids) - shown} more)" if len(ids) > shown else "")


def _entities(index, ids: List[str], info: CollectionInfo) -> List[Dict[str, Any]]:
    dense = index.embeddings(ids)
    sparse = None
    if info.sparse_dim:
        sparse = index.sparse_embeddings(ids)
        sparse = sparse.astype(np.float16 if info.sparse_dtype == "float16" else np.float32, copy=False)
    rows = []
    for i, doc_id in enumerate(ids):
        row = {ID: doc_id, TEXT: index.text(doc_id), E: dense[i]}
        if sparse is not None:
            row[ES] = sparse[i]
        rows.append(row)
    return rows


class MilvusRetriever:
    """Two-stage search over a collection written by export(): stage 1 (top-`candidates` by
    cosine on E) in Milvus, stage 2 by the library's kernels, returning the same Hit objects as
    Index.search (score, cosine, sparsity, stage1; slot -1).

    Arguments:
        client: a pymilvus.MilvusClient.
        collection: a collection written by export().
        encoder: the Encoder of E (needed to search with query texts), checked against the
            identity the collection records; None to search with query vectors only.
        sparse_encoder: the Encoder of Es, checked likewise.
        sparse_fetch: how Es rows of the candidates reach stage 2: "output" (as output fields of
            the search call itself) or "get" (a second call by primary key). None = "output" for
            float32 Es, "get" for float16 Es: Milvus Lite 2.5 fails to return FLOAT16_VECTOR output
            fields from a search (a server can; pass "output" there).
    """

    def __init__(self, client, collection: str, *, encoder=None, sparse_encoder=None,
                 sparse_fetch: Optional[str] = None):
        self.client, self.collection = client, collection
        self.info = CollectionInfo.of_collection(client, collection)
        for role, model, recorded, settings in (
                ("encoder", encoder, self.info.encoder_id, self.info.encoder_settings),
                ("sparse_encoder", sparse_encoder, self.info.sparse_encoder_id, self.info.sparse_encoder_settings)):
            # The library decides (Encoder.identity_mismatch): identities recorded before the settings
            # were part of them still match the same model files.
            why = "" if model is None else model.identity_mismatch(recorded, settings, f"collection '{collection}'")
            if why:
                raise ValueError(f"{role} {model.identity!r} is not the model collection '{collection}' was made with "
                                 f"({recorded!r}): {why}; load that model, or export an index of this one")
        if sparse_encoder is not None and not self.info.sparse_dim:
            raise ValueError(f"collection '{collection}' stores no Es rows, so it takes no sparse_encoder")
        if sparse_fetch not in (None, "output", "get"):
            raise ValueError(f"sparse_fetch must be 'output' or 'get', got {sparse_fetch!r}")
        self.sparse_fetch = sparse_fetch or ("get" if self.info.sparse_dtype == "float16" else "output")
        self.encoder, self.sparse_encoder = encoder, sparse_encoder
        with _in_user_terms(f"to load collection '{collection}'"):
            client.load_collection(collection)

    def __len__(self) -> int:
        with _in_user_terms(f"a count of collection '{self.collection}'"):
            return _count(self.client, self.collection)

    def search(self, queries, k: int = _DEFAULTS.k, *, scorer: str = _DEFAULTS.scorer, alpha: Optional[float] = None,
               candidates: Optional[int] = None, sparse_queries=None, guard: bool = _DEFAULTS.guard, exclude=None,
               search_params: Optional[Dict[str, Any]] = None,
               sparsity_scale: Optional[float] = _DEFAULTS.sparsity_scale,
               stance: str = _DEFAULTS.stance) -> "_core.SearchResults":
        """Index.search's signature and results: a SearchResults (per query a list of Hit, best
        first; FAISS-style arrays; the alpha, gate and scoring line stage 2 used).

        Arguments:
            queries: list of str (encoded with the encoders given to the constructor) or E(q)
                rows as a float array (n, dim) / (dim,).
            k, candidates: hits per query and stage-1 candidates (k <= candidates <= MAX_TOP_K);
                candidates None follows k as in Index.search (SearchOptions).
            scorer: "cosine", or "hoyer" / "l2l1" / "kappa4" (cosine + alpha * sparsity).
            alpha: the sparsity weight; None = the sparse encoder's recorded alpha, else 1.0 with a
                warning (Index.search's rule).
            sparse_queries: Es(q) rows (n, sparse_dim) with query vectors and a sparsity scorer.
            guard: (near-)identical query/document pairs get sparsity -1e9.
            exclude: None or one list of ids per query never returned.
            search_params: Milvus search parameters for E, e.g. {"nprobe": 16} for IVF_FLAT.
            sparsity_scale: the magnitude gate tau of the sparsity term (Index.search's); None =
                the one the sparse encoder records, else none.
            stance: "attack", "support" or "from-query" (each query text's instruction; attack
                for one without and for query vectors), as in Index.search: the sign of the
                sparsity term, with Es reading the claim without its instruction.
        """
        if isinstance(queries, str):
            raise TypeError("queries must be a list of str or an array of query vectors, not one str: wrap it in a list")
        # The settings as every face reads them (one table, one check); then what this store can do.
        options = _core.SearchOptions(k=k, candidates=candidates, scorer=scorer, alpha=alpha,
                                      sparsity_scale=sparsity_scale, guard=guard, stance=stance)
        options.validate()  # the depth too, before any round trip to Milvus
        if options.candidates > MAX_TOP_K:
            raise ValueError(f"candidates (K = {options.candidates}) exceeds the {MAX_TOP_K} candidates one Milvus "
                             f"search returns")
        if options.scorer not in ("cosine", "sparsity"):
            raise ValueError(f"scorer '{scorer}' needs token rows, which a Milvus collection does not store")
        needs_sparse = options.scorer == "sparsity"
        options.check_inputs(sparse_model="held", index_sparse_rows=bool(self.info.sparse_dim),
                             where=f"collection '{self.collection}'")
        dense, sparse, stances, readings = self._query_rows(queries, scorer, needs_sparse, sparse_queries, stance)
        exclude_lists = _core.exclusion_lists(exclude, len(dense))
        hits = []
        for q in range(len(dense)):
            with _in_user_terms(f"the search of collection '{self.collection}'"):
                ids, texts, cosine, rows = self._candidates(dense[q], exclude_lists[q], options.candidates, needs_sparse,
                                                            search_params or {})
            hits.append(_core.rerank(ids, cosine, sparse_query=None if sparse is None else sparse[q],
                                     sparse_candidates=rows, options=options, sparse_encoder=self.sparse_encoder,
                                     exclude=exclude_lists[q], texts=texts, stance=stances[q]))
        return _core.SearchResults(hits, options, sparse_encoder=self.sparse_encoder, stances=readings)

    def _query_rows(self, queries, scorer: str, needs_sparse: bool, sparse_queries, stance: str):
        """E(q) rows, Es rows of the claims (or None), each query's stance and, for query texts, its
        StanceReading (none for vectors, as Index.search reports them)."""
        if isinstance(queries, np.ndarray):
            dense = np.atleast_2d(np.asarray(queries, dtype=np.float32))
            if dense.ndim != 2 or dense.shape[1] != self.info.dim:
                raise ValueError(f"query vectors must be (n, {self.info.dim}), got {queries.shape}")
            sparse = None
            if needs_sparse:
                if sparse_queries is None:
                    raise ValueError("a sparsity scorer with query vectors needs sparse_queries (Es(q))")
                sparse = np.atleast_2d(np.asarray(sparse_queries, dtype=np.float32))
                if sparse.shape != (len(dense), self.info.sparse_dim):
                    raise ValueError(f"sparse_queries must be ({len(dense)}, {self.info.sparse_dim}), got {sparse.shape}")
            if not np.all(np.isfinite(dense)) or np.any(np.linalg.norm(dense, axis=1) == 0):
                raise ValueError("query vectors must be finite and non-zero")
            # A vector carries no instruction: the given stance, else attack (rerank's reading).
            return dense, sparse, [stance] * len(dense), []
        if sparse_queries is not None:
            raise ValueError("sparse_queries goes with query vectors: pass queries as an array too")
        texts = list(queries)
        if self.encoder is None:
            raise ValueError("searching with query texts needs the encoder (MilvusRetriever(..., encoder=...))")
        if needs_sparse and self.sparse_encoder is None:
            raise ValueError("a sparsity scorer with query texts needs the sparse_encoder")
        # As Index.search encodes them: Es reads each claim without its stance instruction.
        dense, sparse, readings = _core.encode_queries(self.encoder, texts, sparse_encoder=self.sparse_encoder,
                                                       scorer=scorer, stance=stance)
        return dense, sparse, [reading.stance for reading in readings], readings

    def _candidates(self, dense, excluded, candidates, needs_sparse, search_params):
        """Stage 1 in Milvus: the ids, texts (so hits carry them, as Index's do), cosines and (for a
        sparsity scorer) Es rows of the top candidates, the query's excluded ids filtered out
        server-side so that they cost no candidate slot."""
        fetch_in_search = needs_sparse and self.sparse_fetch == "output"
        params = {"metric_type": "COSINE", "params": dict(search_params)}
        found = self.client.search(
            self.collection, data=[dense.tolist()], anns_field=E, limit=candidates, search_params=params,
            output_fields=[TEXT, ES] if fetch_in_search else [TEXT],
            filter=f"{ID} not in {json.dumps(excluded)}" if excluded else "")[0]
        ids = [hit["id"] for hit in found]
        texts = [hit["entity"][TEXT] for hit in found]
        cosine = np.array([hit["distance"] for hit in found], dtype=np.float32)
        rows = None
        if needs_sparse and ids:
            rows = (np.array([hit["entity"][ES] for hit in found], dtype=np.float32) if fetch_in_search
                    else self._fetch_sparse(ids))
        elif needs_sparse:
            rows = np.zeros((0, self.info.sparse_dim), dtype=np.float32)
        return ids, texts, cosine, rows

    def _fetch_sparse(self, ids: List[str]) -> np.ndarray:
        rows = {row[ID]: row[ES] for row in self.client.get(self.collection, ids=ids, output_fields=[ES])}
        missing = [i for i in ids if i not in rows]
        if missing:
            raise RuntimeError(f"collection '{self.collection}' returned no Es row for {missing[:3]} "
                               "(deleted between the two calls?)")
        if self.info.sparse_dtype == "float16":
            # Milvus returns FLOAT16_VECTOR values as raw half bytes: read them as float16 in place.
            return np.frombuffer(b"".join(_half_bytes(rows[i]) for i in ids), dtype=np.float16).reshape(
                len(ids), self.info.sparse_dim)
        return np.asarray([rows[i] for i in ids], dtype=np.float32)


def _half_bytes(value) -> bytes:
    return value[0] if isinstance(value, list) else bytes(value)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """python -m counterpoint.milvus export|search: the module's functions from a shell."""
    import argparse
    import logging
    import sys

    parser = argparse.ArgumentParser(prog="python -m counterpoint.milvus",
                                     description="Two-stage contradiction search on Milvus (Milvus Lite file or server).")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("export", "write a saved counterpoint index into a collection (resumable; replaces "
                                       "documents that differ)"),
                            ("search", "search a collection written by export")):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("--uri", required=True, help="Milvus Lite file (*.db) or server URI (http://host:19530)")
        command.add_argument("--collection", required=True)
        command.add_argument("--model", required=True, help="E: model directory or installed model name")
        command.add_argument("--sparse-model", help="Es: model directory or installed model name")
        command.add_argument("--threads", type=int, default=2)
    export_command = commands.choices["export"]
    export_command.add_argument("--index", required=True, help="an index directory written by Index.save / counterpoint index build")
    export_command.add_argument("--batch-size", type=int, default=1000)
    export_command.add_argument("--sparse-dtype", choices=["float32", "float16"])
    export_command.add_argument("--index-type", default="FLAT", help="Milvus index on E: FLAT, IVF_FLAT, HNSW, ...")
    export_command.add_argument("--prune", action="store_true",
                                help="delete the collection's documents that the index does not hold (default: keep "
                                     "them, and say which)")
    search_command = commands.choices["search"]
    search_command.add_argument("queries", nargs="+", help="query texts")
    search_command.add_argument("-k", type=int, default=_DEFAULTS.k)
    search_command.add_argument("--candidates", type=int, help=f"default {_DEFAULTS.candidates}, or k when larger")
    search_command.add_argument("--scorer", default=_DEFAULTS.scorer, help="cosine, hoyer, l2l1 or kappa4")
    search_command.add_argument("--alpha", type=float, help="default: the alpha the sparse model recorded")
    search_command.add_argument("--sparsity-scale", type=float,
                                help="magnitude gate tau of the sparsity term; default: the one the sparse model recorded")
    search_command.add_argument("--stance", default=_DEFAULTS.stance,
                                help="attack, support or from-query (each query's instruction; attack without one)")
    args = parser.parse_args(argv)
    # Each failure is said once, on the error line below: the log lines of pymilvus (configured as it
    # is imported) and of milvus-lite (on the root logger) would repeat it.
    _pymilvus()
    for logger in ("", "pymilvus", "pymilvus.milvus_client"):
        logging.getLogger(logger).setLevel(logging.CRITICAL)

    client = None
    try:  # the user's errors (a model, index or URI that leads nowhere, a name Milvus refuses) without a traceback
        check_collection_name(args.collection, "--collection")
        encoder = _core.Encoder.load(args.model, threads=args.threads)
        sparse = _core.Encoder.load(args.sparse_model, threads=args.threads) if args.sparse_model else None
        if args.command == "export":
            index = _core.Index.load(args.index, encoder=encoder, sparse_encoder=sparse)
            client = connect(args.uri)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ExtraDocumentsWarning)  # said below, in the flag's terms
                counts = export(index, client, args.collection, batch_size=args.batch_size,
                                sparse_dtype=args.sparse_dtype, index_type=args.index_type, prune=args.prune)
            print(f"exported {counts} documents into '{args.collection}' ({len(index)} in the index): "
                  f"{counts.inserted} new, {counts.replaced} replaced (their text or vectors differed), "
                  f"{counts.unchanged} already there")
            if counts.removed:
                print(f"deleted {counts.removed} documents the index does not hold ({_some(counts.extra)})")
            elif counts.extra:
                print(f"warning: '{args.collection}' holds {len(counts.extra)} documents the index does not "
                      f"({_some(counts.extra)}): kept; --prune deletes them", file=sys.stderr)
        else:
            client = connect(args.uri)
            retriever = MilvusRetriever(client, args.collection, encoder=encoder, sparse_encoder=sparse)
            results = retriever.search(args.queries, k=args.k, candidates=args.candidates, scorer=args.scorer,
                                       alpha=args.alpha, sparsity_scale=args.sparsity_scale, stance=args.stance)
            if args.scorer != "cosine":
                print(results.scoring)
            for q, (query, per_query) in enumerate(zip(args.queries, results)):
                print(f"query: {query}")
                if args.scorer != "cosine":
                    print(f"  stance {results.stances[q].describe()}")
                for rank, hit in enumerate(per_query, 1):
                    print(f"  {rank:2d}. {hit.id}  score {hit.score:.4f}  cosine {hit.cosine:.4f}  "
                          f"sparsity {hit.sparsity:.4f}")
    # OSError: files and Milvus unreachable; RuntimeError: what else Milvus reported (_in_user_terms).
    except (ValueError, KeyError, OSError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        if client is not None:
            client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
