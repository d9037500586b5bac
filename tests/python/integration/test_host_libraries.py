"""smppy next to the frameworks that load their own protobuf and zstd: TensorFlow imported before
(it loads them with RTLD_GLOBAL) and after smppy, and torch imported first. Each order runs in a
fresh interpreter that profiles real training, then reads its traces back and summarizes them in
the same process (a libsmprof that bound to the host's protobuf crashed in start_profiling and
summarize)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_python

pytestmark = [pytest.mark.torch, pytest.mark.tf]

# Inserted into the scripts below by str.format, so its braces are single.
PROFILE_AND_SUMMARIZE = """
def profile(out, train):
    config = smppy.Config()
    config.profiler = {"RecordFile": out + "/rank%r_pid%p_s%s.smprof"}
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config)
    profiler.start_profiling()
    train()
    profiler.stop_profiling()
    summary = smppy.analysis.summarize(out)
    return {a["name"]: a["stats"]["count"] for a in summary["annotations"]}
"""

TENSORFLOW_JOB = """
import json, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
{imports}
import smppy.analysis
{profile}
tf.random.set_seed(0)
x = tf.random.normal((64, 8))
y = tf.random.uniform((64,), maxval=3, dtype=tf.int32)
model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(3)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
model.compile(optimizer="sgd", loss=loss_fn)

class Annotate(tf.keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        self.handle = smppy.annotation_begin("keras_batch")
    def on_train_batch_end(self, batch, logs=None):
        smppy.annotation_end(self.handle)

def keras_fit():
    model.fit(x, y, batch_size=16, epochs=2, verbose=0, callbacks=[Annotate()])

optimizer = tf.keras.optimizers.SGD(0.1)
def custom_loop():
    for step in range(5):
        with smppy.annotate("step"):
            with tf.GradientTape() as tape:
                with smppy.annotate("forward"):
                    loss = loss_fn(y, model(x, training=True))
            with smppy.annotate("backward"):
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

keras_counts = profile("{out}/keras", keras_fit)
print(json.dumps({{"keras": keras_counts, "custom": profile("{out}/custom", custom_loop)}}))
"""

TENSORFLOW_FIRST = "import tensorflow as tf\nimport smppy"
SMPPY_FIRST = "import smppy\nimport tensorflow as tf"
KERAS_COUNTS = {"keras_batch": 8}  # 64 samples / 16 per batch x 2 epochs
CUSTOM_COUNTS = {"step": 5, "forward": 5, "backward": 5}


def run_tensorflow_job(imports: str, out: Path) -> dict[str, dict[str, int]]:
    code = TENSORFLOW_JOB.format(imports=imports, profile=PROFILE_AND_SUMMARIZE, out=out)
    proc = run_python(code, cwd=out, env={"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("imports", [TENSORFLOW_FIRST, SMPPY_FIRST], ids=["tensorflow_first", "smppy_first"])
def test_keras_fit_and_custom_loop_profiled_and_summarized_in_process(imports: str, tmp_path: Path) -> None:
    counts = run_tensorflow_job(imports, tmp_path)
    assert counts == {"keras": KERAS_COUNTS, "custom": CUSTOM_COUNTS}


TORCH_FIRST_JOB = """
import json
import torch
import smppy
import smppy.analysis
{profile}
model = torch.nn.Linear(8, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
def train():
    for step in range(4):
        with smppy.annotate("step"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
print(json.dumps(profile("{out}", train)))
"""


def test_torch_imported_first_profiles_and_summarizes(tmp_path: Path) -> None:
    proc = run_python(TORCH_FIRST_JOB.format(profile=PROFILE_AND_SUMMARIZE, out=tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"step": 4}
