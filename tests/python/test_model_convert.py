"""`counterpoint models convert FOLDER` and cp.models.convert turn a user's own Hugging Face /
sentence-transformers folder (BERT or MPNet) into a counterpoint model: the same model convert_hf.py
writes, accepted only once the library's tokenizer gives the ids of the folder's own tokenizer
(Hugging Face's tokenizers) on the converter's probe texts. Every refusal names its cause in the
user's terms and leaves the models folder as it was. `counterpoint models tokenize` prints ids."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"
from conftest import BERT_TINY  # noqa: E402

sys.path.insert(0, str(ROOT / "models" / "bert"))
sys.path.insert(0, str(ROOT / "models"))
import convert_hf  # noqa: E402
import install_model  # noqa: E402
import make_random_checkpoint  # noqa: E402

tokenizers = pytest.importorskip("tokenizers", reason="set-up installs python/requirements-convert.txt")


def checkpoint(folder, family):
    make_random_checkpoint.write_checkpoint(str(folder), family=family, seed=7)
    return folder


def convert_cli(*args, env=None):
    return subprocess.run([str(CLI), "models", "convert", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)


def test_cli_writes_the_model_convert_hf_writes_and_its_tokenizer_matches_the_folder_s(tmp_path):
    source = checkpoint(tmp_path / "My-MPNet", "mpnet")
    done = convert_cli(source, "--dest", tmp_path / "models")
    assert done.returncode == 0, done.stderr
    assert f"my-mpnet: converted from {source}" in done.stdout
    converted = json.loads((tmp_path / "models" / "my-mpnet" / "manifest.json").read_text())
    direct = convert_hf.convert(str(source), str(tmp_path / "direct"))
    assert converted["files"] == direct["files"]
    assert converted["name"] == "my-mpnet" and converted["tokenizer"] == direct["tokenizer"]

    reference = tokenizers.Tokenizer.from_file(str(source / "tokenizer.json"))
    text = "Contradiction <mask> retrieval, 42 times!"
    encoder = cp.Encoder.load(str(tmp_path / "models" / "my-mpnet"))
    assert encoder.tokenize([text]) == [reference.encode(text).ids]
    assert os.listdir(tmp_path / "models") == ["my-mpnet"]  # no scratch folder left


def test_python_twin_converts_a_bert_folder_and_keeps_an_existing_model_unless_forced(tmp_path):
    source = checkpoint(tmp_path / "tiny-bert", "bert")
    models = tmp_path / "models"
    folder = cp.models.convert(source, dest=models)
    assert folder == models / "tiny-bert"
    first = (folder / "manifest.json").read_bytes()
    with pytest.raises(ValueError, match="tiny-bert already exists: give another name, or force replacing it"):
        cp.models.convert(source, dest=models)
    assert (folder / "manifest.json").read_bytes() == first
    assert cp.models.convert(source, dest=models, name="Second", force=True) == models / "second"
    assert cp.models.convert(source, dest=models, force=True) == folder
    assert sorted(os.listdir(models)) == ["second", "tiny-bert"]


def test_a_tokenizer_that_differs_from_the_folder_s_is_refused_and_nothing_is_written(tmp_path):
    source = checkpoint(tmp_path / "ckpt", "bert")
    models = tmp_path / "models"

    def off_by_one(model_dir, texts):  # a tokenizer that maps the last id of each text elsewhere
        return [ids[:-1] + [ids[-1] + 1] for ids in cp.Encoder.load(model_dir).tokenize(texts)]

    with pytest.raises(install_model.InstallError,
                       match="the converted tokenizer differs from .*ckpt's own on 'The quick brown fox"):
        install_model.convert_folder(str(source), str(models), off_by_one)
    assert os.listdir(models) == []


def test_refusals_name_their_cause_and_leave_the_models_folder_unchanged(tmp_path):
    source = checkpoint(tmp_path / "ckpt", "bert")
    roberta = tmp_path / "roberta"
    shutil.copytree(source, roberta)
    config = json.loads((roberta / "config.json").read_text())
    (roberta / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    models = tmp_path / "models"
    models.mkdir()

    refused = convert_cli(roberta, "--dest", models)
    assert refused.returncode == 2
    assert "config.json model_type 'roberta' is not supported (supported: bert, mpnet)" in refused.stderr
    refused = convert_cli(tmp_path / "absent", "--dest", models)
    assert refused.returncode == 2 and "absent is not a folder (give the folder holding config.json)" in refused.stderr
    refused = convert_cli(source, "--dest", models, "--name", "../up")
    assert refused.returncode == 2 and "'../up' cannot name a model" in refused.stderr
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="empty has no config.json"):
        cp.models.convert(tmp_path / "empty", dest=models)
    no_vocabulary = tmp_path / "no-vocabulary"
    shutil.copytree(source, no_vocabulary)
    (no_vocabulary / "vocab.txt").unlink()
    with pytest.raises(ValueError, match=r"^\S*no-vocabulary has neither vocab.txt nor tokenizer.json$"):
        cp.models.convert(no_vocabulary, dest=models)
    assert os.listdir(models) == []

    (models / "ckpt").mkdir()
    refused = convert_cli(source, "--dest", models)
    assert refused.returncode == 2 and "ckpt already exists: give another name, or force replacing it" in refused.stderr
    # The folder being converted is never the one a forced conversion replaces.
    with pytest.raises(ValueError, match="ckpt would be converted into .*ckpt, which holds it or lies inside it"):
        cp.models.convert(source, dest=tmp_path, force=True)
    assert (source / "config.json").exists() and os.listdir(models) == ["ckpt"]


def test_a_python_without_tokenizers_is_told_what_to_install(tmp_path):
    bare = shutil.which("python3", path="/usr/bin")
    if bare is None or subprocess.run([bare, "-c", "import tokenizers"], capture_output=True).returncode == 0:
        pytest.skip("needs a Python with torch but without tokenizers (Debian's /usr/bin/python3)")
    env = {**os.environ, "COUNTERPOINT_PYTHON": bare}
    refused = convert_cli(checkpoint(tmp_path / "ckpt", "bert"), "--dest", tmp_path / "models", env=env)
    assert refused.returncode == 3
    assert refused.stderr == (f"counterpoint models convert: checking the converted tokenizer needs Hugging Face's "
                              f"tokenizers package, which {bare} lacks: pip install tokenizers\n")
    assert not (tmp_path / "models" / "ckpt").exists()


def test_a_name_found_first_in_an_earlier_models_folder_is_warned_about(tmp_path, monkeypatch):
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(BERT_TINY.parent))  # holds a model named bert_tiny
    source = checkpoint(tmp_path / "bert_tiny", "bert")
    with pytest.warns(UserWarning, match="bert_tiny .* is found first by the name 'bert_tiny': load the converted "
                                         "model by its folder"):
        cp.models.convert(source, dest=tmp_path / "models")
    done = convert_cli(source, "--dest", tmp_path / "other", env={**os.environ, "COUNTERPOINT_MODELS": str(BERT_TINY.parent)})
    assert done.returncode == 0 and "is found first by the name 'bert_tiny'" in done.stderr


def test_tokenize_prints_the_ids_of_hugging_face_s_wordpiece(tmp_path):
    texts = ["Hello, world!", "", "-a text starting with a dash", "[CLS]", "[a,b]"]
    reference = tokenizers.BertWordPieceTokenizer.from_file(str(BERT_TINY / "vocab.txt"), lowercase=True)
    expected = [reference.encode(t).ids for t in texts]
    as_json = subprocess.run([str(CLI), "models", "tokenize", str(BERT_TINY), "--json"], input=json.dumps(texts),
                             capture_output=True, text=True)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == expected
    lines = subprocess.run([str(CLI), "models", "tokenize", str(BERT_TINY)], input="\n".join(texts) + "\n",
                           capture_output=True, text=True)
    assert lines.stdout.splitlines() == [" ".join(map(str, ids)) for ids in expected]
    refused = subprocess.run([str(CLI), "models", "tokenize", str(BERT_TINY), "--json"], input='"one text"',
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "standard input must hold one JSON list of texts" in refused.stderr
