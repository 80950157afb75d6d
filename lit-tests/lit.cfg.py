# -*- Python -*-
# lit configuration for ftuner: real lit (PyPI) and LLVM 22's FileCheck.
import os
import sys
import shutil

import lit.formats

config.name = "ftuner"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "..", "target", "lit")

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
profile = os.environ.get("FTUNER_PROFILE", "debug")
bindir = os.environ.get("FTUNER_BIN_DIR", os.path.join(root, "target", profile))
llvm_bin = os.environ.get("LLVM_BIN_DIR", "/usr/lib/llvm-22/bin")

for tool in ["ftuner-opt", "ftuner-run", "ftuner-translate", "ftuner-bench", "ftuner-tune", "ftuner-e2e"]:
    path = os.path.join(bindir, tool)
    if not os.path.exists(path):
        lit_config.fatal(f"{path} not found: build the workspace first (cargo build)")

config.environment["PATH"] = os.pathsep.join([bindir, llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])
if not shutil.which("FileCheck", path=config.environment["PATH"]):
    lit_config.fatal("FileCheck not found (install llvm-22, or set LLVM_BIN_DIR)")

config.substitutions.append(("%examples", os.path.join(root, "examples")))
# The Python that runs lit runs the generators under tools/gen.
config.substitutions.append(("%python", sys.executable))
# mlir-opt-22 is the upstream reference; tests that need it declare REQUIRES: mlir-opt.
if shutil.which("mlir-opt-22"):
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir-opt", shutil.which("mlir-opt-22")))
if shutil.which("mlir-translate-22"):
    config.available_features.add("mlir-translate")
    config.substitutions.append(("%mlir-translate", shutil.which("mlir-translate-22")))
if shutil.which("cc"):
    config.available_features.add("cc")
