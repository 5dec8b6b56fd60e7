"""Old public names kept for one release (issue 38): each still works, warns with a
DeprecationWarning that names the new name, and gives exactly what the new name gives."""
import json
import warnings

import numpy as np
import pytest

from conftest import run

import egret  # noqa: E402  (path set by conftest)

CONFIG = {
    "precision": "double", "seed": 3, "input_channels": 4,
    "layers": [{"type": "continuous_egru", "units": 6, "tau_m": 5, "tau_o": 6, "window_input": 3,
                "threshold": 0.3, "init": {"weight_scale": 1.5, "bias_z": 0.8}}],
    "readout_classes": 3,
}


def sample(**labels):
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 40, 120))
    return egret.Sample(t, rng.integers(0, 4, 120), rng.uniform(0.5, 1.5, 120), channels=4,
                        end_time=40.0, readout_windows=[(10.0, 25.0), (20.0, 39.0)], **labels)


def test_sample_label_is_labels_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"Sample\(label=\.\.\.\) is deprecated; use labels="):
        old = sample(label=[1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = sample(labels=[1, 2])
    assert old.labels == new.labels == [1, 2]
    with pytest.warns(DeprecationWarning, match="use labels="):
        assert sample(label=2).labels == [2, 2]
    with pytest.raises(ValueError, match="Sample: labels and label given; use labels"):
        sample(labels=[1, 2], label=[1, 2])


def test_loss_cross_entropy_is_softmax_cross_entropy_with_a_deprecation_warning():
    net = egret.Network(CONFIG)
    s = [sample(labels=[1, 2])]
    with pytest.warns(DeprecationWarning, match="'cross_entropy' is deprecated; use 'softmax_cross_entropy'"):
        old_loss, old_grad, old_stats = net.loss_and_gradient(s, loss="cross_entropy")
    new_loss, new_grad, new_stats = net.loss_and_gradient(s, loss="softmax_cross_entropy")
    assert old_loss == new_loss > 0
    assert old_grad.keys() == new_grad.keys()
    for name in new_grad:
        assert np.array_equal(old_grad[name], new_grad[name]), name
    assert old_stats["correct"] == new_stats["correct"]


def test_training_file_with_loss_cross_entropy_warns_on_stderr(egret_bin, tmp_path):
    """egret train reads the old name as the new one: the same run (here the delay-copy task,
    which has no class labels, refused the same way), plus the warning naming file and key."""
    outcomes = {}
    for loss in ("cross_entropy", "softmax_cross_entropy"):
        cfg = dict(CONFIG, input_channels=3, readout_classes=2,
                   task={"name": "delay_copy", "bits": 2, "train_trials": 4, "test_trials": 2},
                   training={"epochs": 1, "loss": loss}, output={"dir": str(tmp_path / loss)})
        (tmp_path / f"{loss}.json").write_text(json.dumps(cfg))
        outcomes[loss] = run([egret_bin, "train", "--config", tmp_path / f"{loss}.json"])
    old, new = outcomes["cross_entropy"], outcomes["softmax_cross_entropy"]
    warning = (f"egret: warning: {tmp_path / 'cross_entropy.json'}: training.loss: the loss "
               "'cross_entropy' is deprecated; use 'softmax_cross_entropy' (the old name is "
               "accepted until the next release)\n")
    assert old.stderr.startswith(warning)
    assert "warning" not in new.stderr
    assert old.stderr[len(warning):] == new.stderr == (
        "egret: error: softmax cross-entropy: 2 readouts but 0 labels\n")
    assert old.returncode == new.returncode == 1
    assert old.stdout == new.stdout
