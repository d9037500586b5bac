"""smppy.keras with real tensorflow-cpu: a Keras fit() with validation, the schedule, predict(),
and a custom loop whose tf.function holds an annotation (recorded only while traced: warned).
One interpreter runs them all (TensorFlow's import is the slow part). smppy is imported before
TensorFlow: importing TensorFlow first crashes libsmprof until it is hermetic."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import read_annotations, run_python
from smppy import analysis

pytestmark = [pytest.mark.tf]

pytest.importorskip("tensorflow")

BATCHES, EPOCHS = 4, 3

SCRIPT = """
import json, warnings
import smppy, smppy.keras
import numpy as np, keras, tensorflow as tf

out = {out!r}
def config(name):
    return {{"RecordFile": f"{{out}}/{{name}}/s%s.smprof"}}

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
x, y = np.random.rand({batches} * 16, 8), np.random.rand({batches} * 16, 1)
fit = dict(batch_size=16, validation_data=(x[:32], y[:32]), verbose=0)

model.fit(x, y, epochs={epochs}, callbacks=[smppy.keras.ProfilerCallback(config("fit"))], **fit)
scheduled = smppy.keras.ProfilerCallback(
    config("schedule"), schedule=smppy.schedule(wait=1, warmup=1, active=2, repeat=2))
model.fit(x, y, epochs={epochs}, callbacks=[scheduled], **fit)
model.predict(x, batch_size=16, verbose=0, callbacks=[smppy.keras.ProfilerCallback(config("predict"))])

# A custom loop: annotate around the tf.function call, and (wrongly) inside it.
@tf.function
def train_step(x):
    with smppy.annotate("InsideTfFunction"):
        return tf.reduce_sum(x * 2.0)

profiler = smppy.SMProfiler.instance()
profiler.configure(config("custom"))
profiler.start_profiling()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(6):
        with smppy.annotate("TrainStep"):
            train_step(tf.constant(x[:16], dtype=tf.float32))
        profiler.step()
profiler.stop_profiling()
warned = [str(w.message) for w in caught if "tf.function" in str(w.message)]

# A session the script started: the callback joins it and leaves it running.
profiler.configure(config("joined"))
profiler.start_profiling()
model.fit(x, y, epochs=1, callbacks=[smppy.keras.ProfilerCallback()], **fit)
still_profiling = profiler.is_profiling
profiler.stop_profiling()
print(json.dumps({{"warned": warned, "still_profiling": still_profiling}}))
"""


@pytest.fixture(scope="module")
def keras_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("keras")
    proc = run_python(SCRIPT.format(out=str(out), batches=BATCHES, epochs=EPOCHS), cwd=out)
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout.strip().splitlines()[-1])


def names(path: Path) -> Counter:
    return Counter(e["name"] for e in read_annotations(path))


def test_fit_steps_are_numbered_across_epochs(keras_run: tuple[Path, dict]) -> None:
    out, _ = keras_run
    counts = names(out / "fit")
    steps = BATCHES * EPOCHS
    # One ProfilerStep#N per batch, N global (never restarting per epoch); after the last, AfterLastStep.
    assert {n: c for n, c in counts.items() if n.startswith("ProfilerStep#")} == {
        f"ProfilerStep#{n}": 1 for n in range(steps)
    }
    assert {n: c for n, c in counts.items() if not n.startswith("ProfilerStep#")} == {
        **{f"Epoch#{e}": 1 for e in range(EPOCHS)},
        "Validation": EPOCHS,
        "AfterLastStep": 1,
    }
    # smprof summary / export --steps find the same steps, once each.
    assert sorted(analysis.load(out / "fit", tables=("steps",)).steps["step"]) == list(range(steps))


def test_schedule_records_warmup_and_active_steps_only(keras_run: tuple[Path, dict]) -> None:
    out, _ = keras_run
    files = sorted((out / "schedule").glob("*.smprof"))
    assert len(files) == 2  # one session per cycle
    cycles = [sorted(n for n in names(f) if n.startswith("Profiler")) for f in files]
    assert cycles == [
        ["ProfilerStep#2", "ProfilerStep#3", "ProfilerWarmup#1"],
        ["ProfilerStep#6", "ProfilerStep#7", "ProfilerWarmup#5"],
    ]


def test_predict_is_a_phase_of_its_own_session(keras_run: tuple[Path, dict]) -> None:
    out, _ = keras_run
    counts = names(out / "predict")
    assert counts == {"Predict": 1}  # no training steps


def test_annotate_inside_tf_function_warns_once(keras_run: tuple[Path, dict]) -> None:
    out, result = keras_run
    counts = names(out / "custom")
    assert counts["TrainStep"] == 6
    assert 1 <= counts["InsideTfFunction"] < 6  # recorded only while TensorFlow traced it
    assert len(result["warned"]) == 1 and "InsideTfFunction" in result["warned"][0]


def test_callback_joins_a_session_the_script_started(keras_run: tuple[Path, dict]) -> None:
    out, result = keras_run
    assert result["still_profiling"]
    counts = names(out / "joined")
    assert {n for n in counts if n.startswith("ProfilerStep#")} == {
        f"ProfilerStep#{n}" for n in range(BATCHES)
    }
    assert counts["Epoch#0"] == 1
