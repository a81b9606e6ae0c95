"""Training defaults have one home, the C++ configs: the CLI's `train` commands and the Python
training functions show the same values for every setting they share."""
import os
import pathlib
import re
import subprocess

import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve() / "bin" / "counterpoint"
SHARED = {"batch_size": "--batch-size", "learning_rate": "--lr", "temperature": "--temperature",
          "epochs": "--epochs", "weight_decay": "--weight-decay", "warmup_ratio": "--warmup", "seed": "--seed"}


def python_defaults(function):
    signature = function.__doc__.strip().split("\n")[0]
    return {name: float(value) for name, value in re.findall(r"(\w+): \w+ = ([-+0-9.e]+)", signature)}


def cli_defaults(*command):
    text = subprocess.run([str(CLI), *command, "--help"], capture_output=True, text=True, check=True).stdout
    return {flag: float(value) for flag, value in re.findall(r"(--[\w-]+) (?:UINT|FLOAT|INT)=([-+0-9.e]+)", text)}


@pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")
@pytest.mark.parametrize("function, command", [
    (cp.train_sparsecl, ("train", "sparsecl")),
    (cp.train_contrastive, ("train", "contrastive")),
    (cp.train_verifier, ("train", "verifier")),
])
def test_the_cli_and_python_share_every_training_default(function, command):
    python, cli = python_defaults(function), cli_defaults(*command)
    pairs = {name: (python[name], cli[flag]) for name, flag in SHARED.items() if name in python and flag in cli}
    assert set(pairs) == set(SHARED)
    assert {name: p for name, (p, c) in pairs.items() if p != c} == {}


def test_the_encoder_losses_share_one_temperature_and_batch_size():
    sparsecl, contrastive = python_defaults(cp.train_sparsecl), python_defaults(cp.train_contrastive)
    assert sparsecl["temperature"] == contrastive["temperature"] == 0.02  # the reference's ArguAna setting
    assert sparsecl["batch_size"] == contrastive["batch_size"] == 64  # the reference's batch
