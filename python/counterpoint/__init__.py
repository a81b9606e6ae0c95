"""counterpoint: retrieval of passages that contradict, attack or support a query.

Stage 1 fetches candidates by cosine of dense embeddings, BM25 or both; stage 2 rescores them
with cosine, cosine + alpha * sparsity of the embedding difference (SparseCL: Hoyer, l2/l1,
kappa4) or token-map scores. Every hit carries each score component.

    import counterpoint as cp
    enc = cp.Encoder.load("use-lite-en")      # a model directory, or an installed model's name
    index = cp.Index.build(texts, ids, encoder=enc, sparse_encoder=enc)
    hits = index.search(["the query"], k=10, scorer="hoyer", alpha=1.0)
"""

import collections as _collections
import glob as _glob
import importlib.util as _importlib_util
import os as _os
import sys as _sys


def _core_file():
    """The path of counterpoint._core: this package's, or one in $COUNTERPOINT_BUILD_DIR."""
    spec = _importlib_util.find_spec(__name__ + "._core")
    if spec is not None and spec.origin:
        return spec.origin
    build_dir = _os.environ.get("COUNTERPOINT_BUILD_DIR")
    candidates = []
    if build_dir:
        for folder in (build_dir, _os.path.join(build_dir, "python"),
                       _os.path.join(build_dir, "python", "counterpoint")):
            candidates += _glob.glob(_os.path.join(folder, "_core*.so"))
    if not candidates:
        raise ImportError(
            "counterpoint's compiled module _core was not found. Install the package with "
            "pip install <checkout>, or build it with: cmake -S <repo> -B <repo>/build-py -DPython3_EXECUTABLE=" +
            _sys.executable + " && cmake --build <repo>/build-py --target _core; then put <repo>/python on "
            "PYTHONPATH, or set COUNTERPOINT_BUILD_DIR to the folder holding _core*.so.")
    return candidates[0]


def _torch_package_version(spec):
    """torch's version as its package states it (torch/version.py), without importing torch."""
    version_file = _os.path.join(_os.path.dirname(spec.origin), "version.py")
    try:
        with open(version_file, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("__version__"):
                    return line.split("=", 1)[1].strip().strip("'\"")
    except OSError:
        pass
    return "of unknown version"


def _check_linked_torch(core_file):
    """Refuses, before the compiled module is loaded, a torch that cannot share the process with
    it: two libtorch builds in one process abort or crash the interpreter (a notebook's kernel dies
    without a message). _linked_torch.py, written beside the module by its build, says which
    libtorch the module links."""
    linked_file = _os.path.join(_os.path.dirname(core_file), "_linked_torch.py")
    if not _os.path.exists(linked_file):
        return
    linked = {}
    with open(linked_file, encoding="utf-8") as handle:
        exec(handle.read(), linked)  # three string constants written by CMake
    reinstall = ("pip install <counterpoint checkout or sdist> into this environment builds counterpoint "
                 "against its torch")
    if linked["SOURCE"] == "python":
        # The module links this torch's libtorch: import it first, so that the libraries are the
        # ones torch loads, in the order it loads them, whichever is imported first by the user.
        # PyPI's torch runs its matrix products (MKL) and element-wise kernels on libgomp's threads,
        # which by default spin between parallel regions: on 2 cores, encoding with threads=2 took
        # 2.3x the CPU time per text of Debian's build, and 1.01x with a passive wait policy
        # (benchmarks/speed/torch_builds.py). libgomp reads the policy once, when torch loads it,
        # so it is set only when torch is not loaded yet and the user has not chosen one.
        if "torch" not in _sys.modules:
            _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import torch
        except ImportError as error:
            raise ImportError(f"counterpoint was built against torch {linked['VERSION']}, which this environment "
                              f"no longer has ({error}); {reinstall}") from error
        if torch.__version__ != linked["VERSION"]:
            raise ImportError(f"counterpoint was built against torch {linked['VERSION']}, but this environment has "
                              f"torch {torch.__version__}; the two libtorch builds cannot share a process: "
                              f"reinstall counterpoint (pip install --force-reinstall --no-cache-dir ...); {reinstall}")
        return
    spec = _importlib_util.find_spec("torch")
    if spec is None or not spec.origin:
        return
    library = _os.path.join(_os.path.dirname(spec.origin), "lib", "libtorch_cpu.so")
    package_dir = _os.path.realpath(_os.path.dirname(spec.origin))
    if _os.path.exists(library) and _os.path.realpath(library).startswith(package_dir + _os.sep):
        raise ImportError(
            f"this counterpoint module links the system's libtorch {linked['VERSION']}, but this environment's "
            f"torch ({_torch_package_version(spec)}, {package_dir}) is another build of libtorch, and the two "
            f"would crash the interpreter in one process; {reinstall} (README: Install into your own environment)")


def _load_core():
    """Imports counterpoint._core after checking that this environment's torch can share the process."""
    core_file = _core_file()
    _check_linked_torch(core_file)
    name = __name__ + "._core"
    if name in _sys.modules:
        return _sys.modules[name]
    spec = _importlib_util.spec_from_file_location(name, core_file)
    module = _importlib_util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _sys.modules[name] = module
    return module


_core = _load_core()

from . import _keywords  # noqa: E402  (an unknown keyword refused in one line, by every function)

_keywords.install(_core)

__version__ = _core.__version__

CorruptFileError = _core.CorruptFileError
Encoder = _core.Encoder
Index = _core.Index
Hit = _core.Hit
SearchResults = _core.SearchResults
SearchOptions = _core.SearchOptions
Dataset = _core.Dataset
Document = _core.Document
Query = _core.Query

from . import _familiar  # noqa: E402  (needs _core loaded)
from . import models  # noqa: E402,F401  (cp.models.install, search_path, installed)

Encoder.similarity = _familiar.similarity
Encoder.encode_query = _familiar.encode_query
Encoder.encode_document = _familiar.encode_document
Encoder.get_sentence_embedding_dimension = _familiar.get_sentence_embedding_dimension
SearchResults.to_pandas = _familiar.to_pandas
SearchResults._repr_html_ = _familiar.repr_html

cosine = _core.cosine
hoyer = _core.hoyer
final_scores = _core.final_scores
rerank = _core.rerank
encode_queries = _core.encode_queries
read_stance = _core.read_stance
StanceReading = _core.StanceReading
run_beir = _core.run_beir
run_stance = _core.run_stance
exclusion_lists = _core.exclusion_lists
choose_alpha = _core.choose_alpha
l2_l1 = _core.l2_l1
kappa4 = _core.kappa4
token_map = _core.token_map
maxsim = _core.maxsim
map_mean = _core.map_mean
map_maxsim = _core.map_maxsim
map_alignment = _core.map_alignment

Triple = _core.Triple
LabeledPair = _core.LabeledPair
MapVerifier = _core.MapVerifier
load_triples = _core.load_triples
sick_triples = _core.sick_triples
arguana_triples = _core.arguana_triples
sick_near_miss_triples = _core.sick_near_miss_triples
sick_near_miss_pairs = _core.sick_near_miss_pairs
train_sparsecl = _core.train_sparsecl
train_contrastive = _core.train_contrastive
train_verifier = _core.train_verifier
Inverter = _core.Inverter
Inversion = _core.Inversion
edit_kinds = _core.edit_kinds
stance_edit_kinds = _core.stance_edit_kinds
near_miss_edit_kinds = _core.near_miss_edit_kinds
add_inverted_negatives = _core.add_inverted_negatives
wordnet_antonyms = _core.wordnet_antonyms

load_beir = _core.load_beir
load_corpus = _core.load_corpus
load_queries = _core.load_queries
load_qrels = _core.load_qrels
evaluate = _core.evaluate
evaluate_stance = _core.evaluate_stance
tune_alpha = _core.tune_alpha
clean_corpus = _core.clean_corpus
choose_sparsity_scale = _core.choose_sparsity_scale


def hits_to_run(query_ids, hits):
    """Turns Index.search results into a run for evaluate(): {query_id: [(doc_id, score), ...]}.

    Arguments:
        query_ids: one id per query, in the order the queries were searched.
        hits: what Index.search returned (SearchResults, or any list of Hit lists).
    """
    query_ids = list(query_ids)
    if len(query_ids) != len(hits):
        raise ValueError(f"hits_to_run: {len(query_ids)} query ids for {len(hits)} hit lists")
    repeated = sorted(qid for qid, n in _collections.Counter(query_ids).items() if n > 1)
    if repeated:
        raise ValueError(f"hits_to_run: query ids must be unique (one ranking each), repeated: {repeated[:5]}")
    return {qid: [(hit.id, hit.score) for hit in per_query] for qid, per_query in zip(query_ids, hits)}


__all__ = [
    "__version__", "CorruptFileError", "Encoder", "Index", "Hit", "SearchResults", "Dataset", "Document", "Query",
    "cosine", "hoyer", "l2_l1", "kappa4", "token_map", "maxsim", "map_mean", "map_maxsim",
    "map_alignment", "load_beir", "load_corpus", "load_queries", "load_qrels", "evaluate", "evaluate_stance", "tune_alpha", "hits_to_run",
    "Triple", "LabeledPair", "MapVerifier", "load_triples", "sick_triples", "arguana_triples",
    "sick_near_miss_triples", "sick_near_miss_pairs", "train_sparsecl", "train_contrastive",
    "train_verifier", "clean_corpus", "final_scores", "choose_alpha", "choose_sparsity_scale", "SearchOptions", "rerank", "encode_queries",
    "exclusion_lists",
    "read_stance", "StanceReading",
    "run_beir", "run_stance",
    "Inverter", "Inversion", "edit_kinds", "stance_edit_kinds", "near_miss_edit_kinds", "wordnet_antonyms",
    "add_inverted_negatives",
]
