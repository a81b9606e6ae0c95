"""The README's code blocks, run as a user would run them: from a fresh temporary directory outside the
checkout, with a copy of examples/corpus at ./corpus, HOME pointing into the temporary directory and no
COUNTERPOINT_* or PYTHONPATH variables, so models are found the way a user's would be.

Which blocks run:
  ```python     all of them, in document order, as one script in one interpreter (this one: the project's
                venv, or a pip-installed package); a block that imports counterpoint.milvus or pymilvus only
                when pymilvus and Milvus Lite import here.
  ```bash/sh    each one in document order with `bash -euo pipefail`, in one directory, `counterpoint` resolving
                to <build>/bin/counterpoint and `python3` (and `python`) to this interpreter; Milvus blocks as above.
  ```cmake + ```cpp   the README's CMakeLists.txt and main.cpp, configured against the installed library
                (<build>/test-install, which scripts/run_tests.sh writes before pytest), built and run.
  ```text (or no language)   output shown to the reader; never run.
Set-up blocks (./setup.sh, pip install, cmake --install, data that is not shipped) are marked by the HTML
comment `<!-- skip-test -->` on the line just above their opening fence, and are skipped.

The README must also stay short (at most 360 lines) and its shell blocks may not run set-up unmarked.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BUILD = pathlib.Path(os.environ.get("COUNTERPOINT_BUILD_DIR", REPO / "build")).resolve()
EXAMPLE_CORPUS = REPO / "examples" / "corpus"
MODELS = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", REPO / "models" / "installed")).resolve()
REQUIRED_MODELS = ("all-minilm-l6-v2", "sparse-default")


def _recorded_weights() -> str:
    """How a search states the alpha and gate the installed sparse-default recorded. They are tuned
    when set-up trains it, and the CPU's BLAS kernels round that training differently (alpha 1.55
    on the Intel AVX-512 machines, 1.65 on an AMD EPYC without AVX-512), so the README's outcome is
    checked against the model's own record, not one machine's figure."""
    training = json.loads((MODELS / "sparse-default" / "manifest.json").read_text(encoding="utf-8"))["training"]
    return (f"alpha {training['alpha']:.6g} (recorded by sparse-default) "
            f"scale {training['sparsity_scale']:.6g} (recorded by sparse-default)")
SKIP_MARKER = "<!-- skip-test -->"
MAX_LINES = 360
TIMEOUT_S = 600

FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)\s*$")


def _blocks():
    """(language, code, skipped, line number of the opening fence) for every fenced block."""
    lines = README.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, language = i, match.group(1).lower()
        end = start + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        assert end < len(lines), f"README.md:{start + 1}: code block never closed"
        previous = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        blocks.append((language, "\n".join(lines[start + 1:end]) + "\n", previous == SKIP_MARKER, start + 1))
        i = end + 1
    return blocks


def _of(languages):
    return [b for b in _blocks() if b[0] in languages]


def _needs_milvus(code):
    return "counterpoint.milvus" in code or "pymilvus" in code


def _milvus_available():
    try:
        import milvus_lite  # noqa: F401
        import pymilvus  # noqa: F401
    except ImportError:
        return False
    return True


def _require_models():
    missing = [name for name in REQUIRED_MODELS if not (MODELS / name / "manifest.json").is_file()]
    if not missing:
        return
    message = f"models {', '.join(missing)} not found in {MODELS}; install them with ./setup.sh build"
    if os.environ.get("COUNTERPOINT_REQUIRE_MODELS") == "1":
        pytest.fail(message + " [COUNTERPOINT_REQUIRE_MODELS=1]")
    pytest.skip(message)


def _user_environment(home):
    """The caller's environment without COUNTERPOINT_*, PYTHONPATH and XDG_* (HOME and caches inside the
    temporary directory). PYTHONPATH comes back only when this interpreter cannot import counterpoint
    without it (a suite run with /usr/bin/python3 and PYTHONPATH=python rather than the venv)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("COUNTERPOINT_", "XDG_")) and k != "PYTHONPATH"}
    env.update(HOME=str(home), MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    probe = subprocess.run([sys.executable, "-c", "import counterpoint"], env=env, cwd=home,
                           capture_output=True, text=True)
    if probe.returncode != 0:
        env["PYTHONPATH"] = str(REPO / "python")
        if os.environ.get("COUNTERPOINT_BUILD_DIR"):
            env["COUNTERPOINT_BUILD_DIR"] = os.environ["COUNTERPOINT_BUILD_DIR"]
    return env


@pytest.fixture
def workdir(tmp_path):
    """A directory outside the checkout holding ./corpus (the example corpus) and nothing else."""
    assert REPO not in tmp_path.resolve().parents, "the temporary directory must lie outside the checkout"
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(EXAMPLE_CORPUS, work / "corpus")
    home = tmp_path / "home"
    home.mkdir()
    return work, _user_environment(home)


def _run(command, work, env, what):
    result = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{what} failed (exit {result.returncode}):\n{output[-6000:]}"
    return output


def test_readme_is_at_most_360_lines():
    count = len(README.read_text(encoding="utf-8").splitlines())
    assert count <= MAX_LINES, f"README.md has {count} lines; the limit is {MAX_LINES}"


def test_set_up_blocks_are_marked():
    setup = re.compile(r"(^|\s)(\./setup\.sh|pip3? install|-m pip install|cmake --install|apt-get)\b", re.M)
    for language, code, skipped, line in _of({"sh", "bash", "shell"}):
        assert skipped or not setup.search(code), \
            f"README.md:{line}: a set-up block must carry {SKIP_MARKER} on the line above it"


def test_every_block_has_a_known_language():
    runnable = {"python", "sh", "bash", "shell", "cmake", "cpp", "c++"}
    for language, _, _, line in _blocks():
        assert language in runnable | {"text", ""}, f"README.md:{line}: unknown block language {language!r}"


def test_python_blocks_run_outside_the_checkout(workdir):
    _require_models()
    work, env = workdir
    blocks = [b for b in _of({"python"}) if not b[2]]
    assert blocks, "README.md has no Python blocks"
    milvus = _milvus_available()
    parts = []
    for _, code, _, line in blocks:
        if _needs_milvus(code) and not milvus:
            continue
        parts.append(f"# README.md:{line}\n{code}")
    script = work / "readme_blocks.py"
    script.write_text("\n".join(parts), encoding="utf-8")
    output = _run([sys.executable, str(script)], work, env, "the README's Python blocks")
    # The documented outcome: the contradiction outranks its paraphrase, with Es's recorded alpha.
    assert _recorded_weights() in output, output[-3000:]
    assert re.search(r"^q03-contra\s", output, re.M), output[-3000:]
    assert (work / "corpus-index").is_dir() and (work / "my-head" / "manifest.json").is_file()
    if not milvus:
        pytest.skip("Python blocks passed; the Milvus block was left out (pymilvus / milvus-lite not installed)")


def test_shell_blocks_run_outside_the_checkout(workdir):
    _require_models()
    cli = BUILD / "bin" / "counterpoint"
    if not cli.is_file():
        pytest.skip(f"the CLI is not built ({cli})")
    work, env = workdir
    shims = work.parent / "bin"  # python3 and python: this interpreter (a wrapper keeps a venv a venv)
    shims.mkdir()
    for name in ("python3", "python"):
        (shims / name).write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        (shims / name).chmod(0o755)
    env["PATH"] = os.pathsep.join([str(cli.parent), str(shims), env.get("PATH", "")])
    milvus = _milvus_available()
    ran = left_out = 0
    for _, code, skipped, line in _of({"sh", "bash", "shell"}):
        if skipped:
            continue
        if _needs_milvus(code) and not milvus:
            left_out += 1
            continue
        _run(["bash", "-euo", "pipefail", "-c", code], work, env, f"the shell block at README.md:{line}")
        ran += 1
    assert ran, "README.md has no shell blocks to run"
    assert (work / "cleaned" / "corpus.jsonl").is_file() and (work / "my-head" / "manifest.json").is_file()
    if left_out:
        pytest.skip(f"{ran} shell blocks passed; {left_out} Milvus block(s) left out (pymilvus / milvus-lite not installed)")


def test_cpp_example_builds_against_the_installed_library_and_runs(workdir):
    _require_models()
    prefix = BUILD / "test-install"
    if not (prefix / "lib" / "cmake" / "counterpoint").is_dir():
        pytest.skip(f"no installed library at {prefix} (scripts/run_tests.sh installs it before pytest)")
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    work, env = workdir
    cmake_blocks = [b for b in _of({"cmake"}) if not b[2]]
    cpp_blocks = [b for b in _of({"cpp", "c++"}) if not b[2]]
    assert len(cmake_blocks) == 1 and len(cpp_blocks) == 1, "expected one CMakeLists.txt and one main.cpp block"
    (work / "CMakeLists.txt").write_text(cmake_blocks[0][1], encoding="utf-8")
    (work / "main.cpp").write_text(cpp_blocks[0][1], encoding="utf-8")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    _run(["cmake", "-S", ".", "-B", "build-app", *generator, f"-DCMAKE_PREFIX_PATH={prefix}"], work, env,
         "configuring the README's C++ example")
    _run(["cmake", "--build", "build-app"], work, env, "building the README's C++ example")
    app = work / "build-app" / "contradictions"
    output = _run([str(app)], work, env, "the README's C++ example")
    assert _recorded_weights() in output and output.splitlines()[1].startswith("q03-contra"), output
