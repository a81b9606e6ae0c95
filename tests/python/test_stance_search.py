"""Stance-aware search on a user's own claims: each query's instruction asks for support or attack,
which signs the sparsity term (cos + alpha * Hoyer for attack, cos - alpha * Hoyer for support) while
Es reads the claim without its instruction; Index.search, the CLI and counterpoint.milvus agree hit
for hit, and a given stance is taken as told."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

try:
    import counterpoint as cp
except ImportError:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import counterpoint as cp

REPO = pathlib.Path(__file__).resolve().parents[2]
BERT_TINY = REPO / "tests" / "fixtures" / "bert_tiny"
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", REPO / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"

# Claims on two topics (boxing, school uniforms), pro and con.
CLAIMS = [
    "Boxing causes lasting brain damage to fighters.",
    "Boxing teaches discipline and self control.",
    "A ban would push boxing underground where it is less safe.",
    "Deaths in the ring show the sport is too dangerous.",
    "Adults should be free to take risks with their own bodies.",
    "School uniforms reduce bullying over clothes.",
    "Uniforms stifle the self expression of pupils.",
    "Uniforms are cheaper than buying fashionable clothes.",
]
IDS = [f"c{i}" for i in range(len(CLAIMS))]
CLAIM = "We should ban boxing"
SUPPORT = "Find an argument supporting the claim: " + CLAIM
ATTACK = "Find an argument attacking the claim: " + CLAIM
# Index.search's exact order on this fixture (bert_tiny as E and Es, alpha 1, k 8).
SUPPORT_ORDER = ["c6", "c5", "c3", "c0", "c7", "c4", "c1", "c2"]
ATTACK_ORDER = ["c2", "c4", "c7", "c1", "c0", "c3", "c6", "c5"]


@pytest.fixture(scope="module")
def encoder():
    return cp.Encoder.load(str(BERT_TINY), threads=1)


@pytest.fixture(scope="module")
def index(encoder):
    return cp.Index.build(CLAIMS, IDS, encoder=encoder, sparse_encoder=encoder)


def expected_order(encoder, query, sign):
    """cos(E(query), E(p)) + sign * Hoyer(Es(claim) - Es(p)), best first, computed outside the index."""
    dense_q = encoder.encode([query], query=True)[0]
    sparse_q = encoder.encode([CLAIM], query=True)[0]
    docs = encoder.encode(CLAIMS)
    scores = docs @ dense_q + sign * cp.hoyer(sparse_q, docs)
    return [IDS[i] for i in np.argsort(-scores, kind="stable")], np.sort(scores)[::-1]


def test_the_instruction_asks_for_support_or_attack_and_es_reads_the_claim():
    reading = cp.read_stance(SUPPORT)
    assert (reading.stance, reading.claim, reading.instruction) == ("support", CLAIM,
                                                                     "Find an argument supporting the claim:")
    assert reading.from_instruction and not reading.given
    assert cp.read_stance(ATTACK).stance == "attack"
    plain = cp.read_stance(CLAIM)
    assert (plain.stance, plain.claim, plain.from_instruction) == ("attack", CLAIM, False)
    assert repr(cp.read_stance(SUPPORT, "attack")) == "StanceReading(attack (given))"
    with pytest.raises(ValueError, match="unknown stance 'pro'"):
        cp.read_stance(CLAIM, "pro")


def test_support_and_attack_rank_by_the_signed_sparsity_term(encoder, index):
    results = index.search([SUPPORT, ATTACK], k=len(CLAIMS), scorer="hoyer", alpha=1.0)
    assert [r.stance for r in results.stances] == ["support", "attack"]
    for hits, query, sign in zip(results, [SUPPORT, ATTACK], [-1.0, 1.0]):
        order, scores = expected_order(encoder, query, sign)
        assert [h.id for h in hits] == order
        np.testing.assert_allclose([h.score for h in hits], scores, atol=1e-5)
        for h in hits:
            assert h.score == pytest.approx(h.cosine + sign * h.sparsity, abs=1e-6)
    assert [h.id for h in results[0]] != [h.id for h in results[1]]
    assert [h.id for h in results[0]] == SUPPORT_ORDER
    assert [h.id for h in results[1]] == ATTACK_ORDER


def test_a_given_stance_overrides_the_instruction(index):
    given = index.search([SUPPORT], k=len(CLAIMS), scorer="hoyer", alpha=1.0, stance="attack")
    reading = given.stances[0]
    assert (reading.given, reading.stance, reading.claim) == (True, "attack", SUPPORT)  # taken as told
    for h in given[0]:
        assert h.score == pytest.approx(h.cosine + h.sparsity, abs=1e-6)
    with pytest.raises(ValueError, match="expected from-query, attack or support"):
        index.search([SUPPORT], scorer="hoyer", alpha=1.0, stance="for")
    assert cp.SearchOptions().stance == "from-query"


def test_the_cli_prints_the_stance_it_read_and_the_same_order(index, tmp_path):
    if not CLI.exists():
        pytest.skip(f"{CLI} not built")
    index.save(str(tmp_path / "claims"))
    env = dict(os.environ, COUNTERPOINT_PLUGIN_DIR=str(BUILD / "lib"), COUNTERPOINT_MODELS=str(BERT_TINY.parent))
    out = subprocess.run([str(CLI), "search", "--index", str(tmp_path / "claims"), "--model", str(BERT_TINY),
                          "--sparse-model", str(BERT_TINY), "--query", SUPPORT, "--scorer", "hoyer", "--alpha", "1",
                          "-k", str(len(CLAIMS))], capture_output=True, text=True, env=env, check=True).stdout
    assert '  stance support (read from "Find an argument supporting the claim:")\n' in out
    # "  1. score  cos C  sparsity S  id  text": a dense stage 1 prints no bm25 column.
    ranked = [line.split()[6] for line in out.splitlines() if line.split()[0].rstrip(".").isdigit()]
    assert ranked == SUPPORT_ORDER


def test_a_stance_instruction_given_as_the_prefix_is_read_as_one_inside_the_query(index):
    inside = index.search([SUPPORT], k=len(CLAIMS), scorer="hoyer", alpha=1.0)
    as_prefix = index.search([CLAIM], k=len(CLAIMS), scorer="hoyer", alpha=1.0,
                             prefix="Find an argument supporting the claim: ")
    reading = as_prefix.stances[0]
    assert (reading.stance, reading.claim) == ("support", CLAIM)
    assert [(h.id, round(h.score, 5)) for h in as_prefix[0]] == [(h.id, round(h.score, 5)) for h in inside[0]]


def test_explain_reads_the_claim_as_the_search_did(index):
    for stance in ("from-query", "support"):  # read: Es(claim); given: Es(whole query)
        hit = index.search([SUPPORT], k=1, scorer="hoyer", alpha=1.0, stance=stance)[0][0]
        assert index.explain(SUPPORT, hit.id, stance=stance)["sparsity"] == pytest.approx(hit.sparsity, abs=1e-5)
    with pytest.raises(ValueError, match="did you mean 'support'"):
        index.explain(SUPPORT, "c0", stance="suport")


def test_encode_queries_gives_a_stores_stage_two_the_rows_and_stances_index_search_uses(encoder, index):
    """Candidates found elsewhere (a Milvus collection, a user's own store) rank as Index.search ranks
    them when the query rows come from cp.encode_queries: E of the whole query, Es of the claim."""
    dense, sparse, readings = cp.encode_queries(encoder, [SUPPORT, CLAIM], sparse_encoder=encoder, scorer="hoyer")
    np.testing.assert_allclose(dense, encoder.encode([SUPPORT, CLAIM], query=True), atol=1e-6)
    np.testing.assert_allclose(sparse, encoder.encode([CLAIM, CLAIM], query=True), atol=1e-6)
    assert [r.stance for r in readings] == ["support", "attack"] and readings[0].claim == CLAIM
    rows = index.sparse_embeddings(IDS)
    hits = cp.rerank(IDS, index.embeddings(IDS) @ (dense[0] / np.linalg.norm(dense[0])), sparse_query=sparse[0],
                     sparse_candidates=rows, k=len(IDS), scorer="hoyer", alpha=1.0, stance=readings[0].stance)
    assert [h.id for h in hits] == SUPPORT_ORDER
    cosine_only = cp.encode_queries(encoder, [SUPPORT])
    assert cosine_only[1] is None and cosine_only[2][0].stance == "support"
    # A cosine rerank takes the reading as documented (it has no sparsity term for it to sign).
    by_cosine = cp.rerank(IDS, index.embeddings(IDS) @ (dense[0] / np.linalg.norm(dense[0])), k=2, scorer="cosine",
                          stance=cosine_only[2][0].stance)
    assert [h.id for h in by_cosine] == [h.id for h in index.search([SUPPORT], k=2)[0]]
    with pytest.raises(ValueError, match="sparse-aware encoder"):
        cp.encode_queries(encoder, [SUPPORT], scorer="hoyer")
    with pytest.raises(ValueError, match="token rows"):
        cp.encode_queries(encoder, [SUPPORT], scorer="maxsim")
