"""The hand-written type stub python/counterpoint/__init__.pyi against the compiled module: every
public name, every public method and property of each class, and every parameter of each
function and method is in the stub, so an IDE or a type checker never misses one."""
import ast
import inspect
import pathlib
import re

import counterpoint as cp

STUB = pathlib.Path(cp.__file__).with_name("__init__.pyi")
SIGNATURE = re.compile(r"^\w+\((.*)\) ->", re.S)


def stub_tree():
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    functions, classes = {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)} | {
                n.target.id: n for n in node.body if isinstance(n, ast.AnnAssign)}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    functions[target.id] = node
    return functions, classes


def stub_params(node):
    args = node.args
    keywords = [args.kwarg.arg] if args.kwarg else []  # **options, as the runtime signature lists it
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg != "self"] + keywords


def runtime_params(function):
    """Parameter names of a pybind11 function (from its signature line) or a Python one."""
    try:
        return [p for p in inspect.signature(function).parameters if p != "self"]
    except (TypeError, ValueError):
        pass
    first = (function.__doc__ or "").strip().split("\n")[0]
    match = SIGNATURE.match(first)
    assert match, f"no signature line in the docstring of {function}"
    names = re.findall(r"(?:^|, )\*?(\w+)(?::|\)|,|$)", match.group(1))
    return [n for n in names if n != "self"]


def test_every_public_name_is_in_the_stub():
    functions, classes = stub_tree()
    missing = [name for name in cp.__all__ if name not in functions and name not in classes]
    assert missing == []


def test_every_function_parameter_is_in_the_stub():
    functions, _ = stub_tree()
    differing = {}
    for name in cp.__all__:
        value = getattr(cp, name)
        if inspect.isclass(value) or not callable(value) or not isinstance(functions.get(name), ast.FunctionDef):
            continue
        runtime, stub = runtime_params(value), stub_params(functions[name])
        if runtime != stub:
            differing[name] = (runtime, stub)
    assert differing == {}


def test_every_public_method_property_and_parameter_of_each_class_is_in_the_stub():
    _, classes = stub_tree()
    differing = {}
    for name in cp.__all__:
        cls = getattr(cp, name)
        if not inspect.isclass(cls) or name not in classes or issubclass(cls, BaseException):
            continue
        for member, value in vars(cls).items():
            if member.startswith("_"):
                continue
            if member not in classes[name]:
                differing[f"{name}.{member}"] = "missing"
                continue
            node = classes[name][member]
            function = value.__func__ if isinstance(value, staticmethod) else value
            if isinstance(node, ast.FunctionDef) and callable(function) and not isinstance(value, property):
                is_property = any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)
                if not is_property and runtime_params(function) != stub_params(node):
                    differing[f"{name}.{member}"] = (runtime_params(function), stub_params(node))
    assert differing == {}
