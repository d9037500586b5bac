"""smppy.transformers.ProfilerCallback with a real Hugging Face Trainer on a tiny BERT built in
code (no hub download): global steps, epochs, optimizer steps, evaluation and checkpoints."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import read_annotations, run_python

pytestmark = [pytest.mark.torch]

pytest.importorskip("transformers")

STEPS_PER_EPOCH, EPOCHS = 2, 2

SCRIPT = """
import smppy, smppy.transformers
import torch, transformers

config = transformers.BertConfig(vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=32, max_position_embeddings=16, num_labels=2)
model = transformers.BertForSequenceClassification(config)
data = [{{"input_ids": torch.randint(0, 32, (8,)), "labels": i % 2}} for i in range({steps} * 4)]
args = transformers.TrainingArguments(
    output_dir="{out}/hf", num_train_epochs={epochs}, per_device_train_batch_size=4, eval_strategy="epoch",
    save_strategy="epoch", logging_strategy="no", report_to="none", use_cpu=True, disable_tqdm=True)
callback = smppy.transformers.ProfilerCallback({{"RecordFile": "{out}/s%s.smprof"}})
transformers.Trainer(model=model, args=args, train_dataset=data, eval_dataset=data[:4],
                     callbacks=[callback]).train()
"""


def test_trainer_steps_epochs_and_phases(tmp_path: Path) -> None:
    proc = run_python(SCRIPT.format(out=tmp_path, steps=STEPS_PER_EPOCH, epochs=EPOCHS), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    counts = Counter(e["name"] for e in read_annotations(tmp_path))
    steps = STEPS_PER_EPOCH * EPOCHS
    assert {n: c for n, c in counts.items() if n.startswith("ProfilerStep#")} == {
        f"ProfilerStep#{n}": 1 for n in range(steps)
    }
    assert {n: c for n, c in counts.items() if not n.startswith("ProfilerStep#")} == {
        **{f"Epoch#{e}": 1 for e in range(EPOCHS)},
        "AfterLastStep": 1,
        "OptimizerStep": steps,
        "Evaluate": EPOCHS,
        "Save": EPOCHS,
    }
