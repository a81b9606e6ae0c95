"""counterpoint.milvus: two-stage contradiction search with Milvus holding the corpus.

Stage 1 is an ordinary top-K by cosine on E, so it runs in Milvus; stage 2 needs only the Es rows
of those K candidates, which Milvus returns as output fields of the same search call. The rerank
itself is the library's (counterpoint.rerank): the same kernels, final score, order, ties and
exclusion rule as Index.search.

    import counterpoint as cp, counterpoint.milvus as cpm
    from pymilvus import MilvusClient
    client = MilvusClient("contradictions.db")        # Milvus Lite, a local file
    # client = MilvusClient("http://milvus:19530")     # the same code against a Milvus server
    cpm.export(index, client, "sick")                  # resumable; refuses another encoder's collection
    retriever = cpm.MilvusRetriever(client, "sick", encoder=enc, sparse_encoder=es)
    hits = retriever.search(["A man is not playing a guitar"], k=10, scorer="hoyer")

A collection holds one entity per document: id (VARCHAR primary key), text (VARCHAR), e
(FLOAT_VECTOR, normalised E rows) and es (FLOAT_VECTOR or FLOAT16_VECTOR Es rows), and records
in its description which encoders made the rows, their widths and the layout version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import _core

FORMAT = "counterpoint.milvus/1"
ID, TEXT, E, ES = "id", "text", "e", "es"
# Milvus's limits: VARCHAR fields hold at most 65,535 bytes; one search returns at most 16,384 hits.
MAX_VARCHAR_BYTES = 65535
MAX_TOP_K = 16384
# Search defaults are the library's (counterpoint.SearchOptions), as in Index.search.
_DEFAULTS = _core.SearchOptions()


def _pymilvus():
    try:
        import pymilvus
    except ImportError as error:  # pragma: no cover - the project's set-up installs it
        raise ImportError("counterpoint.milvus needs pymilvus (and milvus-lite for local files): "
                          "./setup.sh build installs the pinned versions of python/requirements-milvus.txt") from error
    return pymilvus


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
        if not client.has_collection(collection):
            raise ValueError(f"Milvus has no collection '{collection}' (export an index into it first: "
                             "counterpoint.milvus.export)")
        description = client.describe_collection(collection).get("description", "")
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
                       max_id_bytes: int, max_text_bytes: int, consistency_level: str, shards: Optional[int]):
    DataType = _pymilvus().DataType
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False, description=info.to_json())
    schema.add_field(ID, DataType.VARCHAR, is_primary=True, max_length=max(1, max_id_bytes))
    schema.add_field(TEXT, DataType.VARCHAR, max_length=max(1, max_text_bytes))
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
    client.create_collection(collection, schema=schema, index_params=indexes, consistency_level=consistency_level,
                             **extra)


def _present(client, collection: str, ids: Sequence[str]) -> set:
    rows = client.get(collection, ids=list(ids), output_fields=[ID])
    return {row[ID] for row in rows}


def _why_unopened(uri: str, message: str) -> str:
    """Milvus Lite's "Open local milvus failed" in the user's terms where the cause is known."""
    import os
    if "://" not in uri and os.path.isfile(uri) and "Open local milvus failed" in message:
        return (f"{message}: another process has this Milvus Lite file open (Milvus Lite serves one process per "
                "file); run the exports one after another (an interrupted export resumes), or use a Milvus server "
                "for concurrent writers")
    return message


def export(index, client, collection: str, *, batch_size: int = 1000, sparse_dtype: Optional[str] = None,
           index_type: str = "FLAT", index_params: Optional[Dict[str, Any]] = None,
           consistency_level: str = "Strong", shards: Optional[int] = None, progress: bool = True) -> int:
    """Writes the documents of `index` (ids, texts, E rows, Es rows) into Milvus collection
    `collection`, in batches of `batch_size`, and returns how many entities it inserted.

    Resumable: an export that stopped (an error, Ctrl-C) continues where it stopped when run again
    with the same index, skipping the documents already there, so no document is written twice.
    A collection made from other encoders, widths or Es storage is refused with both sides named.

    Arguments:
        index: a counterpoint.Index (any kind: its stored rows are exported).
        client: a pymilvus.MilvusClient (Milvus Lite file or server URI).
        sparse_dtype: how Milvus stores Es: "float32" (FLOAT_VECTOR) or "float16"
            (FLOAT16_VECTOR, half the bytes); None = as the index stores it.
        index_type, index_params: Milvus's index on E (COSINE): "FLAT" or "IVF_FLAT" in Milvus Lite,
            "HNSW" / "IVF_FLAT" / ... on a server, e.g. index_params={"nlist": 1024}. Milvus Lite 2.5
            accepts IVF_FLAT but never builds it: it searches small collections exhaustively and
            large ones through its own interim index, ignoring nlist and nprobe (docs/RESULTS.md).
        consistency_level: "Strong" (searches see every finished insert) or Milvus's "Bounded" /
            "Session" / "Eventually" for throughput at cluster scale.
        shards: the collection's shard count on a server (None = Milvus's default).
        progress: a tqdm bar over the documents.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    info = _info_of_index(index, sparse_dtype)
    if not info.encoder_id:
        raise ValueError("the index records no encoder identity (built by an older version): rebuild it so the "
                         "collection can refuse queries of other models")
    ids = index.ids()
    if client.has_collection(collection):
        CollectionInfo.of_collection(client, collection).check_matches(info, collection)
    else:
        id_bytes = max((len(i.encode("utf-8")) for i in ids), default=1)
        text_bytes = max((len(index.text(i).encode("utf-8")) for i in ids), default=1)
        for what, size in (("id", id_bytes), ("text", text_bytes)):
            if size > MAX_VARCHAR_BYTES:
                raise ValueError(f"a document {what} is {size} bytes long; Milvus VARCHAR fields hold at most "
                                 f"{MAX_VARCHAR_BYTES}")
        _create_collection(client, collection, info, index_type, index_params or {}, id_bytes, text_bytes,
                           consistency_level, shards)

    bar = _core.ProgressLine(f"export to {collection}") if progress else None
    inserted, checking = 0, True
    try:
        for start in range(0, len(ids), batch_size):
            batch = ids[start:start + batch_size]
            if checking:
                # Batches go in slot order, so after the first batch with nothing present the rest
                # of an interrupted export is absent too.
                present = _present(client, collection, batch)
                checking = bool(present)
                batch = [i for i in batch if i not in present]
            if batch:
                client.insert(collection, _entities(index, batch, info))
                inserted += len(batch)
            if bar is not None:
                bar.update(min(start + batch_size, len(ids)), len(ids))
    finally:
        if bar is not None:
            bar.close()
    client.flush(collection)
    client.load_collection(collection)
    return inserted


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
        client.load_collection(collection)

    def __len__(self) -> int:
        rows = self.client.query(self.collection, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def search(self, queries, k: int = _DEFAULTS.k, *, scorer: str = _DEFAULTS.scorer, alpha: Optional[float] = None,
               candidates: Optional[int] = None, sparse_queries=None, guard: bool = _DEFAULTS.guard, exclude=None,
               search_params: Optional[Dict[str, Any]] = None,
               sparsity_scale: Optional[float] = _DEFAULTS.sparsity_scale,
               stance: str = _DEFAULTS.stance) -> List[List[Any]]:
        """Index.search's signature and results (one list of Hit per query, best first).

        Arguments:
            queries: list of str (encoded with the encoders given to the constructor) or E(q)
                rows as a float array (n, dim) / (dim,).
            k, candidates: hits per query and stage-1 candidates (k <= candidates <= 16384);
                candidates None = max(100, k), as in Index.search.
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
        if candidates is None:
            candidates = max(_DEFAULTS.candidates, k)
        if k < 1 or candidates < k or candidates > MAX_TOP_K:
            raise ValueError(f"need 1 <= k <= candidates <= {MAX_TOP_K}, got k={k}, candidates={candidates}")
        options = _core.SearchOptions()
        options.scorer = scorer  # the library's scorer names; ValueError for an unknown one
        options.stance = stance  # likewise for the stance
        options.alpha, options.sparsity_scale, options.guard = alpha, sparsity_scale, guard
        options.validate()  # as Index.search: before any round trip to Milvus
        if options.scorer not in ("cosine", "sparsity"):
            raise ValueError(f"scorer '{scorer}' needs token rows, which a Milvus collection does not store")
        needs_sparse = options.scorer == "sparsity"
        if needs_sparse and not self.info.sparse_dim:
            raise ValueError(f"scorer '{scorer}' needs Es rows, and collection '{self.collection}' stores none")
        dense, sparse, stances = self._query_rows(queries, scorer, needs_sparse, sparse_queries, stance)
        exclude_lists = _core.exclusion_lists(exclude, len(dense))
        results = []
        for q in range(len(dense)):
            ids, texts, cosine, rows = self._candidates(dense[q], exclude_lists[q], candidates, needs_sparse,
                                                        search_params or {})
            results.append(_core.rerank(ids, cosine, sparse_query=None if sparse is None else sparse[q],
                                        sparse_candidates=rows, k=k, scorer=scorer, alpha=alpha,
                                        sparse_encoder=self.sparse_encoder, guard=guard, exclude=exclude_lists[q],
                                        sparsity_scale=sparsity_scale, texts=texts, stance=stances[q]))
        return results

    def _query_rows(self, queries, scorer: str, needs_sparse: bool, sparse_queries, stance: str):
        """E(q) rows, Es rows of the claims (or None) and each query's stance."""
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
            return dense, sparse, [stance] * len(dense)
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
        return dense, sparse, [reading.stance for reading in readings]

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

    from pymilvus import MilvusClient

    parser = argparse.ArgumentParser(prog="python -m counterpoint.milvus",
                                     description="Two-stage contradiction search on Milvus (Milvus Lite file or server).")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("export", "write a saved counterpoint index into a collection (resumable)"),
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
    search_command = commands.choices["search"]
    search_command.add_argument("queries", nargs="+", help="query texts")
    search_command.add_argument("-k", type=int, default=_DEFAULTS.k)
    search_command.add_argument("--candidates", type=int, help="default max(100, k)")
    search_command.add_argument("--scorer", default=_DEFAULTS.scorer, help="cosine, hoyer, l2l1 or kappa4")
    search_command.add_argument("--alpha", type=float, help="default: the alpha the sparse model recorded")
    search_command.add_argument("--sparsity-scale", type=float,
                                help="magnitude gate tau of the sparsity term; default: the one the sparse model recorded")
    search_command.add_argument("--stance", default=_DEFAULTS.stance,
                                help="attack, support or from-query (each query's instruction; attack without one)")
    args = parser.parse_args(argv)

    try:  # a model name that leads nowhere is the user's error, said without a traceback
        encoder = _core.Encoder.load(args.model, threads=args.threads)
        sparse = _core.Encoder.load(args.sparse_model, threads=args.threads) if args.sparse_model else None
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=__import__("sys").stderr)
        return 2
    from pymilvus.exceptions import MilvusException  # ConnectionConfigException is one too
    try:
        client = MilvusClient(args.uri)
    except MilvusException as error:  # a folder that does not exist, a server that does not answer
        print(f"error: cannot open Milvus at {args.uri}: {_why_unopened(args.uri, error.message)}",
              file=__import__("sys").stderr)
        return 2
    try:
        if args.command == "export":
            index = _core.Index.load(args.index, encoder=encoder, sparse_encoder=sparse)
            written = export(index, client, args.collection, batch_size=args.batch_size,
                             sparse_dtype=args.sparse_dtype, index_type=args.index_type)
            print(f"exported {written} documents into '{args.collection}' ({len(index)} in the index)")
        else:
            retriever = MilvusRetriever(client, args.collection, encoder=encoder, sparse_encoder=sparse)
            _core.SearchOptions().scorer = args.scorer  # an unknown name is refused before the scoring line prints
            if args.scorer != "cosine":
                gate = _core.choose_sparsity_scale(args.sparsity_scale, sparse)
                print(f"scorer {args.scorer}, {_core.choose_alpha(args.alpha, sparse)[2]}"
                      + (f", {gate[2]}" if gate[0] else ""))
            hits = retriever.search(args.queries, k=args.k, candidates=args.candidates, scorer=args.scorer,
                                    alpha=args.alpha, sparsity_scale=args.sparsity_scale, stance=args.stance)
            for query, per_query in zip(args.queries, hits):
                print(f"query: {query}")
                if args.scorer != "cosine":
                    print(f"  stance {_core.read_stance(query, args.stance).describe()}")
                for rank, hit in enumerate(per_query, 1):
                    print(f"  {rank:2d}. {hit.id}  score {hit.score:.4f}  cosine {hit.cosine:.4f}  "
                          f"sparsity {hit.sparsity:.4f}")
    except (ValueError, KeyError, FileNotFoundError) as error:
        print(f"error: {error}", file=__import__("sys").stderr)
        return 2
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
