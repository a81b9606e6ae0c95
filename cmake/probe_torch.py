"""Prints what CMake needs to know of this interpreter's torch, as a CMake list:
version;package dir;1 if built with the C++11 ABI else 0;1 if its libtorch is a system library.
Exits 1 with the reason on stderr when torch cannot be imported."""
import os
import sys

try:
    import torch
except Exception as error:  # any import failure means: no usable torch here
    sys.stderr.write(f"import torch failed: {error}\n")
    sys.exit(1)

package_dir = os.path.dirname(os.path.realpath(torch.__file__))
library = os.path.join(package_dir, "lib", "libtorch_cpu.so")
# Debian's python3-torch links its package's lib/ to /usr/lib: the same build as libtorch-dev.
from_system = os.path.exists(library) and not os.path.realpath(library).startswith(package_dir + os.sep)
abi = 1 if torch.compiled_with_cxx11_abi() else 0
print(";".join([torch.__version__, package_dir, str(abi), "1" if from_system else "0"]))
