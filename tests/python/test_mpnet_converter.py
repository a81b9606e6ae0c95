"""models/bert/convert_hf.py on MPNet checkpoints (config.json model_type "mpnet"), without the
438 MB all-mpnet-base-v2: the seeded random checkpoint of make_random_checkpoint.py (family mpnet)
is converted and its TorchScript output compared with tests/fixtures/mpnet_tiny_golden.json, which
transformers' MPNetModel computed on the same weights (models/bert/make_mpnet_golden.py network).
Also the special tokens the manifest records, the family table's refusals, and the committed
model directory tests/fixtures/mpnet_tiny that the C++ tests load; regenerate it with
    .venv/bin/python tests/python/test_mpnet_converter.py --write-fixture tests/fixtures/mpnet_tiny
"""
import json
import os
import shutil
import sys

import numpy as np
import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))

import convert_hf  # noqa: E402
import make_random_checkpoint  # noqa: E402

GOLDEN = os.path.join(ROOT, "tests", "fixtures", "mpnet_tiny_golden.json")
FIXTURE_DIR = os.path.join(ROOT, "tests", "fixtures", "mpnet_tiny")
MPNET_SPECIALS = {"specials": {"cls": "<s>", "sep": "</s>", "pad": "<pad>", "unk": "[UNK]", "mask": "<mask>"},
                  "added_tokens": [{"piece": p, "normalized": p == "<unk>"}
                                   for p in ("<s>", "<pad>", "</s>", "<unk>", "[UNK]", "<mask>")],
                  "pair_separators": 2}


def golden():
    with open(GOLDEN, encoding="utf-8") as f:
        return json.load(f)


def tiny_checkpoint(directory):
    """The golden's checkpoint, regenerated from its seed; its weights' hash proves it is the same."""
    g = golden()
    make_random_checkpoint.write_checkpoint(str(directory), **g["checkpoint"])
    assert convert_hf.sha256_of_file(os.path.join(str(directory), "model.safetensors")) == g["weights_sha256"]
    return str(directory)


def run_scripted(model_dir, sequences, pad_id=1):
    longest = max(len(s) for s in sequences)
    ids = torch.tensor([s + [pad_id] * (longest - len(s)) for s in sequences])
    mask = torch.tensor([[1] * len(s) + [0] * (longest - len(s)) for s in sequences])
    model = torch.jit.load(os.path.join(model_dir, "model.pt"))
    with torch.no_grad():
        states, pooled = model(ids, mask)
    return states.numpy(), pooled.numpy()


def test_converted_network_matches_transformers_on_a_padded_batch(tmp_path):
    g = golden()
    out = tmp_path / "model"
    convert_hf.convert(tiny_checkpoint(tmp_path / "ckpt"), str(out), pooling="mean")
    sequences = [t["ids"] for t in g["texts"]]
    assert max(len(s) for s in sequences) > 129  # relative distances past MPNet's 128 are bucketed too
    states, pooled = run_scripted(str(out), sequences)
    shortest = g["states_of"]
    expected_states = np.array(g["states"])
    np.testing.assert_allclose(states[shortest, :len(expected_states)], expected_states, atol=2e-5)
    rows = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    np.testing.assert_allclose(rows, np.array([t["embedding"] for t in g["texts"]]), atol=2e-6)


def test_manifest_records_mpnet_s_special_tokens_and_positions(tmp_path):
    manifest = convert_hf.convert(tiny_checkpoint(tmp_path / "ckpt"), str(tmp_path / "model"), pooling="mean")
    assert manifest["architecture"] == "mpnet"
    assert manifest["tokenizer"] == {"kind": "wordpiece", "file": "vocab.txt", "lowercase": True, **MPNET_SPECIALS}
    # 160 positions, counted from pad_id + 1 = 2: 158 tokens.
    assert manifest["max_length"] == 158
    assert manifest["source"]["ignored_weights"] == ["mpnet.pooler.dense.bias", "mpnet.pooler.dense.weight"]
    model = torch.jit.load(str(tmp_path / "model" / "model.pt"))
    assert model.max_positions == 158
    with pytest.raises(Exception, match="sequence of 159 tokens exceeds the model's 158 positions"):
        model(torch.full((1, 159), 5), torch.ones(1, 159, dtype=torch.long))


def test_the_relative_bias_is_an_embedding_that_partial_fine_tuning_freezes(tmp_path):
    convert_hf.convert(tiny_checkpoint(tmp_path / "ckpt"), str(tmp_path / "model"))
    model = torch.jit.load(str(tmp_path / "model" / "model.pt"))
    outside = sorted(n for n, _ in model.named_parameters() if not n.startswith("layers."))
    # src/training/trainer.cpp freezes, beside the bottom layers, what lies outside them and says
    # "embedding" in its name.
    assert outside == ["embedding_norm.bias", "embedding_norm.weight", "position_embeddings.weight",
                       "relative_position_embeddings.weight", "word_embeddings.weight"]
    assert all(p.requires_grad for p in model.parameters())


def test_sentence_transformers_files_give_pooling_and_max_length(tmp_path):
    ckpt = tiny_checkpoint(tmp_path / "ckpt")
    with open(os.path.join(ckpt, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}], f)
    os.makedirs(os.path.join(ckpt, "1_Pooling"))
    with open(os.path.join(ckpt, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 32, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}, f)
    with open(os.path.join(ckpt, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 100, "do_lower_case": False}, f)
    manifest = convert_hf.convert(ckpt, str(tmp_path / "model"))
    assert (manifest["pooling"], manifest["max_length"]) == ("mean", 100)
    # Given ones win.
    manifest = convert_hf.convert(ckpt, str(tmp_path / "model2"), pooling="cls", max_length=50)
    assert (manifest["pooling"], manifest["max_length"]) == ("cls", 50)
    with open(os.path.join(ckpt, "1_Pooling", "config.json"), "w") as f:
        json.dump({"pooling_mode_max_tokens": True}, f)
    with pytest.raises(ValueError, match="sentence-transformers pooling max_tokens is not supported"):
        convert_hf.convert(ckpt, str(tmp_path / "model3"))


def test_an_unknown_model_type_is_refused_by_name(tmp_path):
    ckpt = tiny_checkpoint(tmp_path / "ckpt")
    with open(os.path.join(ckpt, "config.json")) as f:
        config = json.load(f)
    config["model_type"] = "roberta"
    with open(os.path.join(ckpt, "config.json"), "w") as f:
        json.dump(config, f)
    with pytest.raises(ValueError, match=r"model_type 'roberta' is not supported \(supported: bert, mpnet\)"):
        convert_hf.convert(ckpt, str(tmp_path / "model"))
    assert not os.path.exists(tmp_path / "model" / "model.pt")


def edit_tokenizer_json(ckpt, change):
    path = os.path.join(ckpt, "tokenizer.json")
    with open(path, encoding="utf-8") as f:
        tokenizer = json.load(f)
    change(tokenizer)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tokenizer, f)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.update(post_processor=None), "post_processor None is not supported"),
    (lambda t: t.update(pre_tokenizer={"type": "Whitespace"}), "pre_tokenizer 'Whitespace' is not supported"),
    (lambda t: t["normalizer"].update(strip_accents=False), "normalizer .* is not supported"),
    (lambda t: t["added_tokens"][5].update(id=7), "added token '<mask>' has id 7, but the vocabulary holds it at"),
    (lambda t: t["added_tokens"][0].update(single_word=True), "added token '<s>' is single_word"),
    (lambda t: t["post_processor"].update(cls=["<cls>", 9]), "vocabulary of .* lacks the cls token '<cls>'"),
    (lambda t: t.pop("added_tokens"), "lists no added tokens"),
], ids=["no_post_processor", "whitespace_pre_tokenizer", "accents_kept", "added_id_moved", "single_word",
        "cls_not_in_vocabulary", "no_added_tokens"])
def test_a_tokenizer_the_library_would_not_reproduce_is_refused_by_name(tmp_path, change, message):
    ckpt = tiny_checkpoint(tmp_path / "ckpt")
    edit_tokenizer_json(ckpt, change)
    with pytest.raises(ValueError, match=message):
        convert_hf.convert(ckpt, str(tmp_path / "model"))


def test_an_mpnet_checkpoint_without_tokenizer_json_is_refused(tmp_path):
    ckpt = tiny_checkpoint(tmp_path / "ckpt")
    os.remove(os.path.join(ckpt, "tokenizer.json"))
    with pytest.raises(ValueError, match="no tokenizer.json: a mpnet checkpoint's special tokens are not BERT's"):
        convert_hf.convert(ckpt, str(tmp_path / "model"))


def test_a_bert_tokenizer_json_leaves_the_manifest_without_specials(tmp_path):
    """BERT's specials are what a manifest without them means: a BERT model's manifest, hence its
    identity, is what it was before manifests named specials."""
    ckpt = str(tmp_path / "ckpt")
    make_random_checkpoint.write_checkpoint(ckpt, seed=1)
    pieces = convert_hf.read_vocabulary(ckpt)
    ids = {p: i for i, p in enumerate(pieces)}
    with open(os.path.join(ckpt, "tokenizer.json"), "w") as f:
        json.dump({
            "added_tokens": [{"id": ids[p], "content": p, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": True} for p in make_random_checkpoint.SPECIAL_PIECES],
            "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                           "strip_accents": None, "lowercase": True},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                          {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                               "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                        {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                                        {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                               "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [ids["[CLS]"]], "tokens": ["[CLS]"]},
                                                  "[SEP]": {"id": "[SEP]", "ids": [ids["[SEP]"]], "tokens": ["[SEP]"]}}},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100, "vocab": ids},
        }, f)
    manifest = convert_hf.convert(ckpt, str(tmp_path / "model"))
    assert manifest["tokenizer"] == {"kind": "wordpiece", "file": "vocab.txt", "lowercase": True}
    assert manifest["architecture"] == "bert"


def write_fixture(out_dir):
    """The committed model directory: the golden's checkpoint converted with mean pooling."""
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        convert_hf.convert(tiny_checkpoint(os.path.join(scratch, "ckpt")), os.path.join(scratch, "model"),
                           pooling="mean", name="mpnet-tiny-random", license="none (random weights)")
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.copytree(os.path.join(scratch, "model"), out_dir)


def test_committed_fixture_is_the_converted_golden_checkpoint(tmp_path):
    with open(os.path.join(FIXTURE_DIR, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    assert manifest["source"]["weights_sha256"] == golden()["weights_sha256"]
    for name, sha in manifest["files"].items():
        assert convert_hf.sha256_of_file(os.path.join(FIXTURE_DIR, name)) == sha, name
    g = golden()
    _, pooled = run_scripted(FIXTURE_DIR, [t["ids"] for t in g["texts"]])
    rows = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    np.testing.assert_allclose(rows, np.array([t["embedding"] for t in g["texts"]]), atol=2e-6)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-fixture":
        write_fixture(sys.argv[2])
        print(f"wrote {sys.argv[2]}")
    else:
        sys.exit("usage: test_mpnet_converter.py --write-fixture DIR")
