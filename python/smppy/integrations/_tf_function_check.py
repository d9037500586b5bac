"""The warning for ``smppy.annotate`` inside a ``tf.function``.

Python code in a ``tf.function`` runs only while TensorFlow traces it into a
graph (once per input signature), not at each call: an annotation there is
recorded once or twice, however many steps run. Once enabled (``import
smppy.keras`` does), each recorded ``annotate`` enter checks whether
TensorFlow is tracing and warns once per name.
"""

from __future__ import annotations

import sys
import warnings

from smppy import _smppy

_warned: set[str] = set()


def _check(name: str) -> None:
    tf = sys.modules.get("tensorflow")
    # Not eager: a tf.function (or any TensorFlow graph) is being traced.
    # executing_eagerly() is several times cheaper than inside_function().
    if tf is None or name in _warned or tf.executing_eagerly():
        return
    _warned.add(name)
    warnings.warn(
        f"smppy.annotate({name!r}) runs inside a tf.function: it is recorded only while TensorFlow "
        "traces the function, not at each call. Annotate outside the tf.function (around the call), "
        "or use smppy.keras.ProfilerCallback for Keras fit()",
        RuntimeWarning,
        stacklevel=2,
    )


def enable_tf_function_check() -> None:
    """Check each recorded ``annotate`` enter (costs a Python call per enter while profiling)."""
    _smppy._set_enter_check(_check)
