"""A keyword no bound function takes is refused in one line that names it and the closest one it
does take, as Python's own functions do ("search() got an unexpected keyword argument 'scorre';
did you mean 'scorer'?"), instead of pybind11's listing of every overload and argument type.
Applied once, over every function and method of the compiled module, when the package loads."""

import difflib
import functools
import re

# The parameter list of each signature line pybind11 writes into a docstring (one per overload).
_SIGNATURE = re.compile(r"^(?:\d+\. )?(\w+)\((.*)\) -> ", re.M)
_PARAMETER = re.compile(r"(?:^|, )(\w+):")
_PYBIND_REFUSAL = ("incompatible function arguments", "incompatible constructor arguments")


def keywords_of(doc):
    """The parameter names of every signature line in a pybind11 docstring ("" or None: none)."""
    names = set()
    for match in _SIGNATURE.finditer(doc or ""):
        names.update(_PARAMETER.findall(match.group(2)))
    return names - {"self", "args", "kwargs"}


def _unknown_keyword_message(name, given, known):
    """The one-line refusal of the first keyword in `given` not in `known`, or None when all are known."""
    for keyword in given:
        if keyword not in known:
            close = difflib.get_close_matches(keyword, sorted(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            return f"{name}() got an unexpected keyword argument '{keyword}'{hint}"
    return None


def refusing_unknown_keywords(function, name):
    """`function` (a pybind11 function or method) with unknown keywords refused in one line."""
    known = keywords_of(getattr(function, "__doc__", None))
    if not known:
        return function

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except TypeError as error:
            if not any(refusal in str(error) for refusal in _PYBIND_REFUSAL):
                raise
            message = _unknown_keyword_message(name, kwargs, known)
            if message is None:
                raise
        raise TypeError(message)

    return call


def install(module):
    """Wraps every function of `module` and every method (and constructor) of its classes."""
    builtin = type(len)
    for attribute, value in list(vars(module).items()):
        if isinstance(value, builtin):
            setattr(module, attribute, refusing_unknown_keywords(value, attribute))
        elif isinstance(value, type):
            _install_on_class(value)


def _install_on_class(cls):
    for attribute, value in list(vars(cls).items()):
        if attribute.startswith("__") and attribute != "__init__":
            continue
        name = f"{cls.__name__}.{attribute}" if attribute != "__init__" else cls.__name__
        if isinstance(value, staticmethod):
            setattr(cls, attribute, staticmethod(refusing_unknown_keywords(value.__func__, name)))
        elif type(value).__name__ == "instancemethod" or (attribute == "__init__" and callable(value)):
            setattr(cls, attribute, refusing_unknown_keywords(value, name))
