"""`pip install .` gives a working package outside the checkout: the venv made by
scripts/pip_install_test_venv.sh (run by scripts/run_tests.sh, which sets COUNTERPOINT_PIP_VENV)
imports counterpoint from its own site-packages, encodes and searches, and its `counterpoint`
console script runs the bundled CLI, all from a directory outside the tree with no library or
build paths in the environment."""
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = os.environ.get("COUNTERPOINT_PIP_VENV")
BERT_TINY = ROOT / "tests" / "fixtures" / "bert_tiny"

if not VENV:
    pytest.skip("COUNTERPOINT_PIP_VENV is unset (scripts/run_tests.sh pip-installs the package into a venv "
                "and sets it)", allow_module_level=True)

VENV = pathlib.Path(VENV)
CLEAN_ENV = {k: v for k, v in os.environ.items()
             if k not in ("LD_LIBRARY_PATH", "PYTHONPATH", "COUNTERPOINT_BUILD_DIR", "COUNTERPOINT_MODELS",
                          "COUNTERPOINT_PLUGIN_DIR")}


def in_venv(code, cwd):
    return subprocess.run([str(VENV / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd=cwd,
                          env=CLEAN_ENV, timeout=600)


def test_the_installed_package_is_imported_from_the_venv_not_from_the_checkout(tmp_path):
    result = in_venv("import counterpoint as cp; print(cp.__file__); print(cp._core.__file__)", tmp_path)
    assert result.returncode == 0, result.stderr
    module, core = result.stdout.split()
    site = str(VENV / "lib")
    assert module.startswith(site) and core.startswith(site), result.stdout
    checkout = str(ROOT / "python")
    assert not module.startswith(checkout) and not core.startswith(checkout)


def test_the_installed_package_encodes_indexes_and_searches(tmp_path):
    code = f"""
import counterpoint as cp
enc = cp.Encoder.load({str(BERT_TINY)!r})
index = cp.Index.build(["the cat sleeps", "the cat never sleeps", "a dog barks"], ["a", "b", "c"],
                       encoder=enc, sparse_encoder=enc)
hits = index.search(["the cat sleeps"], k=3, scorer="hoyer", alpha=1.0)[0]
print(len(hits), sorted(h.id for h in hits))
"""
    result = in_venv(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "3 ['a', 'b', 'c']"


def test_the_installed_package_loads_the_default_model_by_its_hub_name_from_any_directory(tmp_path):
    """The folder set-up installed the models into is recorded in the package: no COUNTERPOINT_* or
    PYTHONPATH variable is needed, and HOME is an empty one (no per-user cache to fall back on)."""
    installed = ROOT / "models" / "installed" / "all-minilm-l6-v2" / "manifest.json"
    if not installed.exists():
        pytest.skip("the default models are not installed")
    env = {k: v for k, v in CLEAN_ENV.items() if not k.startswith("COUNTERPOINT_")}
    env["HOME"] = str(tmp_path)
    result = subprocess.run([str(VENV / "bin" / "python"), "-c",
                             "import counterpoint as cp; print(cp.Encoder.load('all-MiniLM-L6-v2').encode('x').shape)"],
                            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(384,)"


def test_the_console_script_runs_the_bundled_cli_with_its_version(tmp_path):
    script = VENV / "bin" / "counterpoint"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, cwd=tmp_path,
                            env=CLEAN_ENV, timeout=120)
    assert result.returncode == 0, result.stderr
    expected = in_venv("import counterpoint; print(counterpoint.__version__)", tmp_path).stdout.strip()
    assert result.stdout.strip() == f"counterpoint {expected}"


def test_the_bundled_cli_finds_the_demo_corpus_in_the_package(tmp_path):
    result = in_venv("import counterpoint, os; print(os.path.dirname(counterpoint.__file__))", tmp_path)
    package = pathlib.Path(result.stdout.strip())
    assert (package / "share" / "counterpoint" / "examples" / "corpus" / "corpus.jsonl").exists()
    assert (package / "lib" / "libcounterpoint_sentencepiece.so").exists()
    assert os.access(package / "bin" / "counterpoint", os.X_OK)


def test_the_package_carries_the_model_installer_with_its_pins_and_converters(tmp_path):
    result = in_venv("import counterpoint, os; print(os.path.dirname(counterpoint.__file__))", tmp_path)
    models = pathlib.Path(result.stdout.strip()) / "share" / "counterpoint" / "models"
    for file in ("install_model.py", "pins.sh", "use_lite/convert.py", "bert/install_wheel.py", "bert/convert_hf.py",
                 "bert/bert_model.py", "bert/safetensors_io.py"):
        assert (models / file).exists(), file
    code = ("import counterpoint as cp\n"
            "try:\n    cp.models.install('use-lite-em')\nexcept ValueError as e:\n    print(e)\n")
    done = in_venv(code, tmp_path)
    assert "did you mean 'use-lite-en'?" in done.stdout, done.stderr
