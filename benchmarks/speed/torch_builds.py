"""Encoding cost under two torch builds: this interpreter's counterpoint (set-up's .venv: Debian's
libtorch 1.13 with OpenBLAS) and another interpreter's (a pip install beside PyPI's torch 2.x, whose
libtorch brings MKL and its own OpenMP runtime), on the same texts, model and thread count. Each
side runs in a child process and reports the CPU seconds and wall seconds of its encode calls; the
ratio torch-2 / Debian of CPU seconds per text shows whether the thread plan holds in the mixed
process (oversubscribed threads spin and burn CPU time without encoding faster).

    .venv/bin/python benchmarks/speed/torch_builds.py --other-python VENV/bin/python \\
        [--texts 2000] [--threads 2] [--model all-minilm-l6-v2] [--repeats 3]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SICK = ROOT.parent / "shared" / "data" / "sick" / "corpus.jsonl"

CHILD = r"""
import json, resource, sys, time
import counterpoint as cp
import torch
model, threads, repeats, texts_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
texts = json.load(open(texts_file))
encoder = cp.Encoder.load(model, threads=threads)
encoder.encode(texts[:64])  # warm-up: first-call initialisation is not part of the cost
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
runs = []
for _ in range(repeats):
    cpu0, wall0 = cpu(), time.perf_counter()
    encoder.encode(texts)
    runs.append({"cpu_s": cpu() - cpu0, "wall_s": time.perf_counter() - wall0})
print(json.dumps({"torch": torch.__version__, "runs": runs}))
"""


def read_texts(count):
    if not SICK.is_file():
        sys.exit(f"torch_builds.py: {SICK} is missing (the SICK set of ../shared/data)")
    texts = []
    with open(SICK, encoding="utf-8") as handle:
        for line in handle:
            texts.append(json.loads(line)["text"])
            if len(texts) == count:
                break
    return texts


def measure(python, args, texts_file):
    env = {k: v for k, v in os.environ.items() if k not in ("COUNTERPOINT_BUILD_DIR", "PYTHONPATH")}
    child = subprocess.run([python, "-c", CHILD, args.model, str(args.threads), str(args.repeats), texts_file],
                           capture_output=True, text=True, env=env, cwd="/")
    if child.returncode != 0:
        sys.exit(f"torch_builds.py: {python} failed (exit {child.returncode}):\n{child.stderr[-2000:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--other-python", required=True, help="the interpreter of the torch-2 environment")
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="all-minilm-l6-v2")
    args = parser.parse_args()
    if args.texts < 64 or args.threads < 1 or args.repeats < 1:
        parser.error("--texts must be >= 64, --threads and --repeats >= 1")
    texts_file = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"torch_builds_{os.getpid()}.json"
    texts_file.write_text(json.dumps(read_texts(args.texts)))
    try:
        sides = {"debian": measure(sys.executable, args, str(texts_file)),
                 "torch2": measure(args.other_python, args, str(texts_file))}
    finally:
        texts_file.unlink()
    print(f"{args.texts} SICK sentences, {args.model}, threads={args.threads}, best of {args.repeats}")
    best = {}
    for side, result in sides.items():
        run = min(result["runs"], key=lambda r: r["cpu_s"])
        best[side] = run
        print(f"  {side:7} torch {result['torch']:14} CPU {run['cpu_s']:7.2f} s "
              f"({1000 * run['cpu_s'] / args.texts:6.2f} CPU-ms/text)  wall {run['wall_s']:6.2f} s")
    print(f"  ratio torch2/debian: CPU per text {best['torch2']['cpu_s'] / best['debian']['cpu_s']:.3f}, "
          f"wall {best['torch2']['wall_s'] / best['debian']['wall_s']:.3f}")


if __name__ == "__main__":
    main()
