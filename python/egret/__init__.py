"""egret: event-driven simulation of activity-sparse recurrent networks (continuous-time EGRU)
with exact event-based gradients.

The compiled core is ``egret._egret`` (pybind11), built by the project's CMake
(``bash scripts/build.sh``) into ``build/python/egret``. Use it with Debian's interpreter::

    PYTHONPATH=build/python /usr/bin/python3 -c "import egret"

or install it (``/usr/bin/python3 -m pip install --no-build-isolation .``, see the README).

Main pieces:

* :class:`Network` -- a network from a JSON configuration (str or dict); ``simulate``,
  ``simulate_batch`` (TBB), ``loss_and_gradient`` (exact gradients), ``forward``/``backward``,
  ``parameters``/``set_parameters`` (numpy), checkpoints and HDF5 traces.
* :class:`Sample` -- one input sequence (times in ms, channels, values) with readouts and targets.
* event-camera files and transforms: :func:`read_events`, :func:`to_input`, :func:`downsample`,
  :func:`denoise`, ..., the DVS128 Gesture layout (:func:`load_gesture_split`) and the synthetic
  generator (:func:`write_synthetic_gesture_dataset`).
* a trained network on a recording: :func:`prepare_recording` (one window as a :class:`Sample`,
  prepared as the gesture job and ``egret simulate --input RECORDING`` prepare it),
  :func:`recording_preprocessing` and :func:`classify_recording` (``egret classify``).
* :mod:`egret.torch` -- autograd integration (``EventNetwork``, ``SingleLayer``, ``ContinuousEGRU``).

Errors from C++ arrive as ``ValueError`` (bad input) or ``RuntimeError`` with the C++ message.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ._egret import (  # noqa: F401
    CAMERA_EVENT_DTYPE,
    CAMERA_FORMATS,
    GESTURE_CLASSES,
    ForwardBatch,
    Network,
    Sample,
    as_camera_events,
    classify_recording,
    crop,
    crop_time,
    delay_copy_trials,
    denoise,
    downsample,
    emulate_events_from_frames,
    hardware_profiles,
    load_gesture_split,
    merge_polarities,
    prepare_recording,
    read_checkpoint,
    read_events,
    read_trace,
    recording_preprocessing,
    refractory_period,
    slice_by_time,
    to_frames,
    to_input,
    write_aedat31,
    write_evt3,
    write_synthetic_gesture_dataset,
    write_saccade_dataset,
)

__version__ = "0.1.0"


def estimate(trace: str, profile: str = "loihi_davies2018", write: bool = True) -> dict:
    """Energy and latency per sample and per layer of a traced run on a hardware profile.

    ``profile`` is a built-in name (:func:`hardware_profiles`) or a profile file of your own
    (``docs/metrics.md``). Returns the same dictionary as ``egret estimate --json``: mean
    ``energy_j_per_sample`` and ``latency_s_per_sample`` (None when the profile gives no
    time), ``per_sample`` arrays, ``layers`` with energy by operation, every constant's
    ``sources`` and the mapping ``assumptions``. With ``write`` (default), the estimate is
    also added to the trace as ``/egret/estimates/<profile>``.
    """
    import json

    from ._egret import _estimate_json

    return json.loads(_estimate_json(trace, profile, write))


def export_nir(network, path: str, extension: bool = False) -> None:
    """Write a network as a NIR graph (the Neuromorphic Intermediate Representation, HDF5).

    ``network`` is an :class:`Network` (its current parameters), a configuration (a dict, JSON
    text, or a file) or a checkpoint file. Each
    family maps as ``docs/nir.md`` says; a family NIR cannot express exactly raises
    ``ValueError`` naming what NIR lacks, unless ``extension`` writes it as an egret extension
    node. The same as ``egret export-nir``.
    """
    import json

    from ._egret import _export_nir

    if isinstance(network, Network):
        network.export_nir(str(path), extension=extension)
    elif isinstance(network, dict):
        _export_nir(json.dumps(network), True, str(path), extension)
    elif isinstance(network, str) and network.lstrip().startswith("{"):
        _export_nir(network, True, str(path), extension)
    else:
        _export_nir(str(network), False, str(path), extension)


def import_nir(path: str, dt: Optional[float] = None, out: Optional[str] = None) -> dict:
    """The network configuration that runs a NIR graph, as a dict for :class:`Network`.

    ``dt`` is the tick interval of every layer in ms (NIR's nodes are continuous in time); by
    default the one egret wrote into the graph (a graph from another tool needs it). With
    ``out`` the configuration is also written there as JSON. The same as ``egret import-nir``;
    a node egret cannot run raises ``ValueError`` naming it and its place in the file.
    """
    import json
    import os

    from ._egret import _import_nir_json

    text = _import_nir_json(str(path), 0.0 if dt is None else float(dt))
    if out is not None:
        tmp = str(out) + ".tmp-egret"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, out)
    return json.loads(text)


class ActivitySparsity(NamedTuple):
    """NeuroBench's ActivationSparsity of a run and the step it was counted at."""

    value: float
    step_ms: float  # NaN when the layers' steps differ

    def __str__(self) -> str:
        step = f"{self.step_ms:g} ms step" if math.isfinite(self.step_ms) else "each layer's step"
        return f"{self.value:.3f} (NeuroBench, {step})"


def activity_sparsity(results: Sequence[dict], layers: Optional[Sequence[int]] = None
                      ) -> ActivitySparsity:
    """NeuroBench's ActivationSparsity over samples and layers, the figure egret's CLI prints:
    1 - (unit, step) pairs with at least one event / all (unit, step) pairs (docs/metrics.md),
    pooled over the results of ``Network.simulate`` / ``simulate_batch`` and the given layers
    (default all). The step is a tick layer's tick, or for continuous layers the configuration's
    ``simulation.dense_step`` (1 ms unless set; the main job uses its 5 ms input bin). Printed,
    it names both: ``0.442 (NeuroBench, 5 ms step)``."""
    active = pairs = 0
    steps = set()
    for r in results:
        for k, c in enumerate(r["layer_counts"]):
            if layers is None or k in layers:
                active += c["active_unit_steps"]
                pairs += c["steps"] * c["units"]
                steps.add(c["metrics"]["dense_step_ms"])
    if pairs == 0:
        raise ValueError("activity_sparsity: no (unit, step) pairs in the results")
    return ActivitySparsity(1 - active / pairs, steps.pop() if len(steps) == 1 else math.nan)


def camera_sample(
    events: np.ndarray,
    sensor_size: Tuple[int, int],
    *,
    bin_length: int,
    end_time: float,
    readout_times: Optional[Sequence[float]] = None,
    readout_windows: Optional[Sequence[Tuple[float, float]]] = None,
    labels=None,
    coalesce: str = "sum",
    merged_polarity: bool = False,
    t0: int = 0,
) -> Sample:
    """A :class:`Sample` from camera events (structured x, y, p, t array, t in microseconds).

    Events are coalesced per channel ``(p, y, x)`` and time bin of ``bin_length`` microseconds
    (:func:`to_input`); ``end_time`` and readouts are in milliseconds relative to ``t0``.
    """
    t, channel, value, channels = to_input(
        events, sensor_size, bin_length, coalesce=coalesce, merged_polarity=merged_polarity, t0=t0
    )
    return Sample(
        t,
        channel,
        value,
        channels=channels,
        end_time=end_time,
        readout_times=readout_times,
        readout_windows=readout_windows,
        labels=labels,
    )


__all__ = [
    "ActivitySparsity",
    "CAMERA_EVENT_DTYPE",
    "CAMERA_FORMATS",
    "GESTURE_CLASSES",
    "ForwardBatch",
    "Network",
    "Sample",
    "activity_sparsity",
    "as_camera_events",
    "camera_sample",
    "classify_recording",
    "crop",
    "crop_time",
    "delay_copy_trials",
    "denoise",
    "downsample",
    "emulate_events_from_frames",
    "export_nir",
    "import_nir",
    "load_gesture_split",
    "merge_polarities",
    "prepare_recording",
    "read_checkpoint",
    "read_events",
    "read_trace",
    "recording_preprocessing",
    "refractory_period",
    "slice_by_time",
    "to_frames",
    "to_input",
    "write_aedat31",
    "write_evt3",
    "write_synthetic_gesture_dataset",
    "write_saccade_dataset",
]
