"""smppy.lightning.SMProfiler with real Lightning: a tiny model's fit with validation, then
predict; every action Lightning profiles is an annotation, training batches are global steps."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import read_annotations, run_python

pytestmark = [pytest.mark.torch]

pytest.importorskip("lightning")

BATCHES, EPOCHS = 4, 2

SCRIPT = """
import smppy, smppy.lightning
import lightning, torch
from torch.utils.data import DataLoader, TensorDataset

class Tiny(lightning.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)
    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)
    def validation_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)
    def predict_step(self, batch, _):
        return self.layer(batch[0])
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

data = TensorDataset(torch.randn({batches} * 16, 8), torch.randn({batches} * 16, 1))
trainer = lightning.Trainer(
    max_epochs={epochs}, accelerator="cpu", logger=False, enable_checkpointing=False,
    enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
    limit_val_batches=2, profiler=smppy.lightning.SMProfiler({{"RecordFile": "{out}/s%s.smprof"}}))
model = Tiny()
trainer.fit(model, DataLoader(data, batch_size=16), DataLoader(data, batch_size=16))
trainer.predict(model, DataLoader(data, batch_size=16))
"""


def test_lightning_actions_are_annotations_and_batches_global_steps(tmp_path: Path) -> None:
    proc = run_python(SCRIPT.format(out=tmp_path, batches=BATCHES, epochs=EPOCHS), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    fit, predict = sorted(tmp_path.glob("*.smprof"))  # a session per stage
    counts = Counter(e["name"] for e in read_annotations(fit))
    steps = BATCHES * EPOCHS
    assert {n: c for n, c in counts.items() if n.startswith("ProfilerStep#")} == {
        f"ProfilerStep#{n}": 1 for n in range(steps)
    }
    assert counts["AfterLastStep"] == 1
    assert counts["[Stage]fit"] == 1
    assert counts["run_training_epoch"] == EPOCHS
    assert counts["run_training_batch"] == steps
    assert counts["[Strategy]SingleDeviceStrategy.training_step"] == steps
    assert counts["[_TrainingEpochLoop].train_dataloader_next"] == steps
    assert counts["[Strategy]SingleDeviceStrategy.validation_step"] == 2 * EPOCHS
    assert counts["[LightningModule]Tiny.optimizer_step"] == steps
    predicted = Counter(e["name"] for e in read_annotations(predict))
    assert predicted["[Stage]predict"] == 1
    assert predicted["[Strategy]SingleDeviceStrategy.predict_step"] == BATCHES
