"""Put on PYTHONPATH by ``smprof run``: every Python process of the job starts
profiling at interpreter start-up (smppy._run_bootstrap), then the
``sitecustomize`` this one shadows, if any, runs as it would have."""

import importlib.machinery
import importlib.util
import os
import sys


def _start_profiling() -> None:
    try:
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
