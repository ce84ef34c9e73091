# lit configuration for torch2tosa: FileCheck tests of passes (test/Passes/<flag>/*.mlir),
# of the driver (test/torch2tosa-opt/) and of the Python API (test/python/*.py).
import os
import shutil
import sys

import lit.formats

config.name = "torch2tosa"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")
# Python end-to-end tests run under pytest, not lit; fixtures are their data.
config.excludes = ["e2e", "fixtures", "lit.cfg.py", "Output", "__pycache__", "conftest.py"]

repo_root = os.path.dirname(config.test_source_root)
python = sys.executable
filecheck = shutil.which("filecheck", path=os.path.dirname(python)) or shutil.which("filecheck")
if filecheck is None:
    lit_config.fatal("filecheck not found: pip install filecheck (see pyproject.toml [test])")

config.substitutions.append(("%PYTHON", python))
config.substitutions.append(
    ("torch2tosa-opt", f"{python} {os.path.join(repo_root, 'tools', 'torch2tosa-opt')}"))
config.substitutions.append(("filecheck", filecheck))
config.environment["FILECHECK_OPTS"] = "--dump-input=fail"
config.environment["PYTHONPATH"] = os.path.join(repo_root, "python")
config.environment["PYTHONWARNINGS"] = "ignore"
