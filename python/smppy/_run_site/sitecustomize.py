"""Put on PYTHONPATH by ``smprof run``: every Python process of the job starts
profiling at interpreter start-up (smppy._run_bootstrap), then the
``sitecustomize`` this one shadows, if any, runs as it would have."""

import importlib.machinery
import importlib.util
import os
import sys


def _import_run_s_smppy() -> None:
    """Import the smppy of the `smprof run` that started this process (the
    same version, installed for this interpreter or not), without putting its
    directory on sys.path, where it could shadow the program's packages."""
    path = os.environ.get("SMP_RUN_SMPPY_PATH")
    spec = importlib.machinery.PathFinder.find_spec("smppy", [path]) if path else None
    if spec is None or spec.loader is None or "smppy" in sys.modules:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["smppy"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["smppy"]  # the program's own `import smppy` is not affected
        raise


def _start_profiling() -> None:
    try:
        _import_run_s_smppy()
        from smppy import _run_bootstrap
    except Exception as e:  # an environment problem: never stop the program
        print(f"smprof run: profiling is off in pid {os.getpid()}: cannot import smppy: {e}", file=sys.stderr)
        return
    _run_bootstrap.start_from_environment()


def _run_shadowed_sitecustomize() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_start_profiling()
_run_shadowed_sitecustomize()
