"""Runs examples/contradiction_retrieval.ipynb headless (nbclient, the venv's kernel) from a directory
outside the checkout and fails when any cell raises.

The notebook needs the default models (all-minilm-l6-v2 and sparse-default) in $COUNTERPOINT_MODELS
(default <repo>/models/installed). Without sparse-default the test is skipped, unless
COUNTERPOINT_REQUIRE_MODELS=1, in which case missing models fail it.
"""
import json
import os
import pathlib
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "examples" / "contradiction_retrieval.ipynb"
MODELS = pathlib.Path(os.environ.get("COUNTERPOINT_MODELS", REPO / "models" / "installed")).resolve()
REQUIRED_MODELS = ("all-minilm-l6-v2", "sparse-default")
TIMEOUT_S = 600


def _require_models():
    missing = [name for name in REQUIRED_MODELS if not (MODELS / name / "manifest.json").is_file()]
    if not missing:
        return
    message = (f"models {', '.join(missing)} not found in {MODELS}; install them with "
               "models/install.sh (or set COUNTERPOINT_MODELS)")
    if os.environ.get("COUNTERPOINT_REQUIRE_MODELS") == "1":
        pytest.fail(message + " [COUNTERPOINT_REQUIRE_MODELS=1]")
    if "sparse-default" in missing:
        pytest.skip(message)
    pytest.fail(message)


def _kernel_environment():
    env = dict(os.environ)
    python_dir = str(REPO / "python")
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([python_dir] + [p for p in paths if p != python_dir])
    # Set-up's folder is found without the variable (the library records it at build time).
    if MODELS == (REPO / "models" / "installed").resolve():
        env.pop("COUNTERPOINT_MODELS", None)
    else:
        env["COUNTERPOINT_MODELS"] = str(MODELS)
    env["MPLBACKEND"] = "Agg"
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


def test_notebook_has_no_committed_outputs():
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.read(str(NOTEBOOK), as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "notebook is committed with outputs"


def _venv_kernel(directory, monkeypatch):
    """A kernel spec that runs this interpreter (the project's venv, with pymilvus and Milvus Lite),
    as `.venv/bin/python -m ipykernel install --name counterpoint` registers it for a user."""
    spec = directory / "kernels" / "counterpoint-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "counterpoint (test)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(directory))
    return "counterpoint-test"


def test_notebook_runs_without_errors(tmp_path, monkeypatch):
    _require_models()
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(str(NOTEBOOK), as_version=4)
    # From a directory outside the checkout, as a user's own notebook folder.
    elsewhere = tmp_path / "my-notebooks"
    elsewhere.mkdir()
    client = nbclient.NotebookClient(notebook, kernel_name=_venv_kernel(tmp_path, monkeypatch), timeout=TIMEOUT_S,
                                     resources={"metadata": {"path": str(elsewhere)}})
    start = time.perf_counter()
    try:
        client.execute(cwd=str(elsewhere), env=_kernel_environment())
    except CellExecutionError as error:
        pytest.fail(f"a notebook cell failed:\n{error}")
    elapsed = time.perf_counter() - start
    print(f"\nnotebook executed in {elapsed:.1f} s")

    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    assert not errors, errors
    executed = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert executed and all(cell.execution_count for cell in executed), "some cells were not executed"


def test_a_kernel_without_counterpoint_outside_the_checkout_is_told_which_kernel_to_choose(tmp_path):
    """The notebook names the kernel `counterpoint` (the README's `ipykernel install --name counterpoint`); run
    in another interpreter, away from any checkout, its set-up cell says so instead of a bare import error."""
    import subprocess
    notebook = json.loads(NOTEBOOK.read_text())
    assert notebook["metadata"]["kernelspec"]["name"] == "counterpoint"
    setup = next("".join(cell["source"]) for cell in notebook["cells"]
                 if cell["cell_type"] == "code" and "import counterpoint as cp" in "".join(cell["source"]))
    setup = setup[:setup.index("from counterpoint import plots")]  # the import, not what needs the package
    other = "/usr/bin/python3"
    clean = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    if not os.access(other, os.X_OK) or subprocess.run([other, "-c", "import IPython"], env=clean).returncode != 0:
        pytest.skip(f"{other} with IPython is not on this machine")
    if subprocess.run([other, "-c", "import counterpoint"], env=clean, cwd=tmp_path,
                      capture_output=True).returncode == 0:
        pytest.skip(f"counterpoint is installed for {other} itself")
    done = subprocess.run([other, "-c", setup], env=clean, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "choose the kernel 'counterpoint'" in done.stderr, done.stderr[-2000:]
