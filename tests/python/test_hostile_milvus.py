"""counterpoint.milvus against hostile input (issue #62): a re-export of other texts under the same
ids replaces the stale rows and names the documents the index lacks; a counterpoint description on
another schema, a file that is not a Milvus Lite database and a collection name Milvus refuses are
each refused by name before Milvus sees them; what Milvus itself reports arrives as the project's
error types; and the module's command line says each in one line, without a traceback."""
import json
import pathlib
import sqlite3
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("pymilvus", reason="counterpoint.milvus needs pymilvus + milvus-lite (./setup.sh installs them)")
pytest.importorskip("milvus_lite", reason="Milvus Lite is not installed (./setup.sh installs it)")

import counterpoint as cp  # noqa: E402
import counterpoint.milvus as cpm  # noqa: E402
from pymilvus import DataType, MilvusClient  # noqa: E402
from pymilvus.exceptions import MilvusException  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)
TEXTS = ["the cat sleeps", "the cat never sleeps", "a dog barks", "dogs never bark", "rain falls today",
         "no rain falls today"]
IDS = [f"s{i:05d}" for i in range(len(TEXTS))]
# Index B: other texts under the first four ids of index A.
OTHER_TEXTS = ["the market rose", "the market fell", "he plays guitar", "he does not play guitar"]
NAME_RULE = "a name starts with a letter or an underscore and holds only letters, digits and underscores, at most 255"


@pytest.fixture(scope="module")
def tiny():
    return cp.Encoder.load(str(BERT_TINY), threads=1)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    milvus = cpm.connect(str(tmp_path_factory.mktemp("milvus") / "hostile.db"))
    yield milvus
    milvus.close()


def stored_rows(client, collection):
    rows = client.query(collection, filter="", output_fields=["id", "text", "e"], limit=100)
    return {row["id"]: row for row in rows}


def run_module(*args):
    return subprocess.run([sys.executable, "-m", "counterpoint.milvus", *args], capture_output=True, text=True,
                          timeout=300)


def assert_one_error_line(result, line):
    assert result.returncode == 2 and result.stdout == "", result
    assert result.stderr.splitlines() == [line], result.stderr


@pytest.mark.parametrize("fp16", [False, True])
def test_a_re_export_of_other_texts_under_the_same_ids_replaces_the_stale_rows(client, tiny, fp16):
    collection = f"reexport_{'fp16' if fp16 else 'fp32'}"
    first = cp.Index.build(TEXTS, IDS, encoder=tiny, sparse_encoder=tiny, fp16=fp16)
    assert cpm.export(first, client, collection, batch_size=4, progress=False) == len(TEXTS)
    second = cp.Index.build(OTHER_TEXTS, IDS[:4], encoder=tiny, sparse_encoder=tiny, fp16=fp16)
    with pytest.warns(cpm.ExtraDocumentsWarning) as warned:
        counts = cpm.export(second, client, collection, batch_size=4, progress=False)
    # It was "exported 0": the old texts and vectors stayed.
    assert (counts, counts.inserted, counts.replaced, counts.unchanged) == (4, 0, 4, 0)
    assert counts.extra == ("s00004", "s00005") and counts.removed == 0
    assert [str(w.message) for w in warned] == [
        f"collection '{collection}' holds 2 documents the index does not ('s00004', 's00005'): kept; "
        "export(..., prune=True) deletes them"]
    rows = stored_rows(client, collection)
    assert {i: rows[i]["text"] for i in IDS[:4]} == dict(zip(IDS[:4], OTHER_TEXTS))
    np.testing.assert_array_equal(np.array([rows[i]["e"] for i in IDS[:4]], dtype=np.float32),
                                  second.embeddings(IDS[:4]))
    assert rows["s00004"]["text"] == TEXTS[4]  # kept: the index does not say it is gone

    pruned = cpm.export(second, client, collection, batch_size=4, prune=True, progress=False)
    assert (pruned, pruned.unchanged, pruned.extra, pruned.removed) == (0, 4, ("s00004", "s00005"), 2)
    assert sorted(stored_rows(client, collection)) == IDS[:4]
    retriever = cpm.MilvusRetriever(client, collection, encoder=tiny, sparse_encoder=tiny)
    # Every document of the index, with its text and score (the tiny model ties some, in either order).
    def scored(results):
        return [sorted((h.id, h.text, round(h.score, 4)) for h in hits) for hits in results]

    assert scored(retriever.search(OTHER_TEXTS, k=4, scorer="hoyer", alpha=1.0)) == scored(
        second.search(OTHER_TEXTS, k=4, scorer="hoyer", alpha=1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left to say
        again = cpm.export(second, client, collection, progress=False)
    assert (again, again.unchanged, again.extra) == (0, 4, ())


def test_the_module_re_exports_and_prunes_in_the_flag_s_terms(tmp_path, tiny):
    cp.Index.build(TEXTS, IDS, encoder=tiny, sparse_encoder=tiny).save(str(tmp_path / "first"))
    cp.Index.build(OTHER_TEXTS, IDS[:4], encoder=tiny, sparse_encoder=tiny).save(str(tmp_path / "second"))
    common = ["export", "--uri", str(tmp_path / "cli.db"), "--collection", "docs", "--model", str(BERT_TINY),
              "--sparse-model", str(BERT_TINY), "--threads", "1", "--index"]
    assert run_module(*common, str(tmp_path / "first")).returncode == 0
    kept = run_module(*common, str(tmp_path / "second"))
    assert kept.returncode == 0 and kept.stdout == (
        "exported 4 documents into 'docs' (4 in the index): 0 new, 4 replaced (their text or vectors differed), "
        "0 already there\n"), kept
    assert kept.stderr.splitlines()[-1] == (  # after the progress line
        "warning: 'docs' holds 2 documents the index does not ('s00004', 's00005'): kept; --prune deletes them")
    pruned = run_module(*common, str(tmp_path / "second"), "--prune")
    assert pruned.returncode == 0 and "warning" not in pruned.stderr, pruned
    assert pruned.stdout.splitlines() == [
        "exported 0 documents into 'docs' (4 in the index): 0 new, 0 replaced (their text or vectors differed), "
        "4 already there", "deleted 2 documents the index does not hold ('s00004', 's00005')"]


def forge_collection(client, name, description):
    """A collection of another schema (INT64 primary key 'pk', a 4-d vector 'v') under `description`."""
    schema = client.create_schema(auto_id=False, description=description)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=4)
    indexes = client.prepare_index_params()
    indexes.add_index("v", index_type="FLAT", metric_type="COSINE")
    client.create_collection(name, schema=schema, index_params=indexes)


def test_a_counterpoint_description_on_another_schema_is_refused_by_name(client, tiny, tmp_path):
    index = cp.Index.build(TEXTS, IDS, encoder=tiny, sparse_encoder=tiny)
    forge_collection(client, "forged", cpm._info_of_index(index, None).to_json())
    refusal = ("collection 'forged' has a counterpoint.milvus/1 description but not the fields export() makes: it has "
               "no field 'id' (VARCHAR); drop it and export again")
    # It was MilvusException "Invalid expr: pk in [s00000,...]".
    with pytest.raises(ValueError) as refused:
        cpm.export(index, client, "forged", progress=False)
    assert str(refused.value) == refusal
    with pytest.raises(ValueError) as refused:
        cpm.MilvusRetriever(client, "forged", encoder=tiny)
    assert str(refused.value) == refusal

    # A field of the right name and the wrong width, and one export() does not write.
    for name, dim, extra, why in (("narrow", 4, False, "its field 'e' is FLOAT_VECTOR of dim 4, not FLOAT_VECTOR of "
                                                       f"dim {tiny.dim}"),
                                  ("wider", tiny.dim, True, "it has fields export() does not write ('more')")):
        schema = client.create_schema(auto_id=False, description=cpm._info_of_index(index, None).to_json())
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("text", DataType.VARCHAR, max_length=64)
        schema.add_field("e", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field("es", DataType.FLOAT_VECTOR, dim=tiny.dim)
        if extra:
            schema.add_field("more", DataType.INT64)
        indexes = client.prepare_index_params()
        for vector in ("e", "es"):
            indexes.add_index(vector, index_type="FLAT", metric_type="COSINE")
        client.create_collection(name, schema=schema, index_params=indexes)
        with pytest.raises(ValueError) as refused:
            cpm.export(index, client, name, progress=False)
        assert str(refused.value) == (f"collection '{name}' has a counterpoint.milvus/1 description but not the fields "
                                      f"export() makes: {why}; drop it and export again")

    # The command line says it in one line (the file made by another process: Milvus Lite serves one per file).
    database = tmp_path / "forged.db"
    made = subprocess.run([sys.executable, __file__, "forge", str(database), cpm._info_of_index(index, None).to_json()],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    result = run_module("search", "--uri", str(database), "--collection", "forged", "--model", str(BERT_TINY),
                        "--threads", "1", "the cat sleeps")
    assert_one_error_line(result, f"error: {refusal}")


def test_a_text_file_given_as_the_uri_is_named_as_no_milvus_lite_database(tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"just some notes\n")
    # It was "another process has this Milvus Lite file open".
    result = run_module("search", "--uri", str(notes), "--collection", "docs", "--model", str(BERT_TINY),
                        "--threads", "1", "query")
    assert_one_error_line(result, f"error: cannot open Milvus at {notes}: the file is not a Milvus Lite database (it "
                                  "starts b'just some notes\\n'; a Milvus Lite file is an SQLite database)")
    assert notes.read_bytes() == b"just some notes\n"

    application = tmp_path / "app.db"  # milvus-lite would add its tables to another application's SQLite file
    with sqlite3.connect(application) as database:
        database.execute("CREATE TABLE orders (id INTEGER)")
    before = application.read_bytes()
    with pytest.raises(ValueError) as refused:
        cpm.connect(str(application))
    assert str(refused.value) == (f"cannot open Milvus at {application}: the file is an SQLite database of another "
                                  "application (its tables: orders), not a Milvus Lite database")
    assert application.read_bytes() == before
    with pytest.raises(ValueError, match=f"^cannot open Milvus at {tmp_path}: it is a folder, not a Milvus Lite file$"):
        cpm.connect(str(tmp_path))

    made = cpm.connect(str(tmp_path / "made.db"))  # a Milvus Lite file, new and then reopened, is one
    made.close()
    reopened = cpm.connect(str(tmp_path / "made.db"))
    assert reopened.list_collections() == []
    reopened.close()


def test_collection_names_milvus_refuses_are_value_errors_naming_the_rule(client, tiny, tmp_path):
    index = cp.Index.build(TEXTS, IDS, encoder=tiny, sparse_encoder=tiny)
    # It was pymilvus's ParamError for '', a MilvusException for the others.
    for name, why in (("", "it is empty"), ("bad name!", "it has ' ' at position 4"),
                      ("9lives", "it has '9' at position 1"), ("x" * 256, "it is 256 characters long")):
        with pytest.raises(ValueError) as refused:
            cpm.export(index, client, name, progress=False)
        assert str(refused.value) == f"collection {name!r} is not a Milvus collection name: {why}; {NAME_RULE}"
        with pytest.raises(ValueError, match="is not a Milvus collection name"):
            cpm.MilvusRetriever(client, name, encoder=tiny)
    with pytest.raises(TypeError, match=r"^collection must be a str \(a Milvus collection name\), got int$"):
        cpm.export(index, client, 7, progress=False)
    assert cpm.check_collection_name("_x" + "9" * 253) == "_x" + "9" * 253  # 255 characters: accepted

    index.save(str(tmp_path / "index"))
    result = run_module("export", "--uri", str(tmp_path / "names.db"), "--collection", "bad name!", "--model",
                        str(BERT_TINY), "--threads", "1", "--index", str(tmp_path / "index"))
    assert_one_error_line(result, "error: --collection 'bad name!' is not a Milvus collection name: it has ' ' at "
                                  f"position 4; {NAME_RULE}")


def test_what_milvus_refuses_arrives_as_the_project_s_error_types(client, tiny):
    index = cp.Index.build(TEXTS, IDS, encoder=tiny, sparse_encoder=tiny)
    with pytest.raises(ValueError) as refused:
        cpm.export(index, client, "levels", consistency_level="Sometimes", progress=False)
    assert str(refused.value) == ("Milvus refused the export into collection 'levels': invalid consistency level: "
                                  "Sometimes")
    assert isinstance(refused.value.__cause__, MilvusException)
    with pytest.raises(RuntimeError, match=r"^Milvus refused the export into collection 'kinds': invalid index type: "
                                           r"NOPE") as failed:
        cpm.export(index, client, "kinds", index_type="NOPE", progress=False)
    assert isinstance(failed.value.__cause__, MilvusException)
    # A collection whose index Milvus refused is not left behind for the next export to take as its own.
    assert not client.has_collection("kinds") and not client.has_collection("levels")
    assert cpm.export(index, client, "kinds", progress=False) == len(TEXTS)


def test_a_collection_made_with_shorter_fields_refuses_longer_texts_by_name(client, tiny):
    """Collections made before export() gave its fields Milvus's limit: a server would refuse the batch."""
    index = cp.Index.build(TEXTS, IDS, encoder=tiny, sparse_encoder=tiny)
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False,
                                  description=cpm._info_of_index(index, None).to_json())
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=6)
    schema.add_field("text", DataType.VARCHAR, max_length=max(len(text) for text in TEXTS))
    schema.add_field("e", DataType.FLOAT_VECTOR, dim=tiny.dim)
    schema.add_field("es", DataType.FLOAT_VECTOR, dim=tiny.dim)
    indexes = client.prepare_index_params()
    indexes.add_index("e", index_type="FLAT", metric_type="COSINE")
    indexes.add_index("es", index_type="FLAT", metric_type="L2")
    client.create_collection("short", schema=schema, index_params=indexes)
    assert cpm.export(index, client, "short", progress=False) == len(TEXTS)
    longer = cp.Index.build(["a text longer than any text of the first index"], IDS[:1], encoder=tiny,
                            sparse_encoder=tiny)
    with pytest.raises(ValueError) as refused:
        cpm.export(longer, client, "short", progress=False)
    assert str(refused.value) == ("a document text is 46 bytes long; collection 'short' holds texts of at most 20 "
                                  "bytes (set when it was made): export into another collection, or drop this one "
                                  "first")
    assert json.loads(client.describe_collection("short")["description"])["format"] == cpm.FORMAT
    assert stored_rows(client, "short")["s00000"]["text"] == TEXTS[0]


if __name__ == "__main__" and sys.argv[1] == "forge":  # a forged collection made in a process of its own
    forger = MilvusClient(sys.argv[2])
    forge_collection(forger, "forged", sys.argv[3])
    forger.close()
