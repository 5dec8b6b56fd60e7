"""PyTorch integration: egret's event-driven networks as ``torch.nn.Module``.

The forward pass runs in C++ (event-driven, TBB over the batch) and records the adjoint tapes;
the backward pass is egret's exact event-based adjoint (EventProp-style), so the gradients are
egret's own, and everything downstream of the readouts (a ``torch.nn.Linear``, any loss, torch
optimizers, schedulers, ``DistributedDataParallel``) is ordinary PyTorch.

* :class:`EventNetwork` -- a network from an egret configuration (str or dict). Its forward takes
  a list of :class:`egret.Sample` and returns the readout logits ``(B, R, classes)`` if the
  configuration has a readout (then an ``nn.Linear`` initialised from egret's readout), else the
  readouts of the last layer's output trace ``(B, R, units)``.
* :class:`ContinuousEGRU` -- one continuous-time EGRU layer (box kernel), readouts of its output
  trace ``(B, R, units)``: compose it with torch modules.

Parameters are float64 tensors (``model.float()`` works). egret computes on the CPU in its own
precision (``precision=``: the configuration's ``"precision"``, float if absent), whatever the
tensors' dtype; outputs and gradients are cast to the parameters' dtype and device. Thresholds are trained as ``theta = softplus(theta_rho)`` (always
positive, as ``egret train`` does); time constants are buffers unless
``train_time_constants=True`` (then ``tau = exp(log_tau)``).
"""
from __future__ import annotations

import copy as _copy
import json
import os as _os
import signal as _signal
from typing import Dict, List, Optional, Sequence, Union

import numpy as np
import torch
from torch import nn

from . import _egret
from ._evnn_egru import EGRU, from_torch_gru_gate_order, to_torch_gru_gate_order  # noqa: F401

def _softplus_inverse(y: np.ndarray) -> np.ndarray:
    # log(exp(y) - 1), stable for large y
    return y + np.log(-np.expm1(-y))


class _EventNetworkFunction(torch.autograd.Function):
    """Forward: egret's event-driven simulation of a batch with adjoint tapes, returning the
    readouts of the last layer's output trace. Backward: egret's exact adjoint sweep."""

    @staticmethod
    def forward(ctx, core, samples, threads, regularizers, activity, names, *tensors):  # type: ignore[override]
        params = {}
        for name, t in zip(names, tensors):
            a = t.detach().to(torch.float64).cpu().numpy()
            params[name] = float(a) if a.ndim == 0 else a
        batch = core.forward(samples, parameters=params, threads=threads)
        regularization = batch.regularization(**regularizers) if regularizers else 0.0
        activity.clear()
        activity.update(batch.activity())
        ctx.batch = batch
        ctx.regularized = bool(regularizers)
        ctx.names = names
        ctx.like = [(t.shape, t.dtype, t.device) for t in tensors]
        # egret computes on the CPU in its precision; outputs follow the parameters' dtype/device
        like = {"dtype": tensors[0].dtype, "device": tensors[0].device}
        return torch.from_numpy(batch.traces).to(**like), torch.tensor(regularization, **like)

    @staticmethod
    def backward(ctx, grad_traces, grad_regularization):  # type: ignore[override]
        batch = ctx.batch
        ctx.batch = None  # the tapes are used once
        if batch is None:
            raise RuntimeError("egret: backward through the same forward pass twice is not supported")
        # Without regularisers the second output is a constant 0: its adjoint moves nothing.
        regularized = ctx.regularized and grad_regularization is not None
        d_reg = float(grad_regularization) if regularized else 0.0
        grads = batch.backward(d_traces=grad_traces.detach().to(torch.float64).contiguous().numpy(),
                               d_regularization=d_reg)
        out = [torch.as_tensor(np.asarray(grads[n]), dtype=torch.float64).reshape(shape)
               .to(dtype=dtype, device=device)
               for n, (shape, dtype, device) in zip(ctx.names, ctx.like)]
        return (None, None, None, None, None, None, *out)


class _LayerParameters(nn.Module):
    """The trainable parameters of one layer, whatever its family (Network.parameter_specs):
    free ones as they are (``U_u``, ...), positive ones through softplus (``theta_rho``), time
    constants as ``log_tau`` (their logs in the family's declared order, a per-unit one such as
    LIF's ``tau_mem`` or the continuous EGRU's ``tau_m`` flattened in place: one entry per unit;
    ``time_constant_slices`` says where each sits); fixed ones are left out."""

    def __init__(self, values: Dict[str, np.ndarray], specs: Dict[str, tuple],
                 train_time_constants: bool):
        super().__init__()
        self.free: List[str] = []
        self.positive: List[str] = []
        self.time_constants: List[str] = []
        for name, (constraint, training) in specs.items():
            if training == "fixed":
                continue
            if constraint == "log":
                self.time_constants.append(name)
            elif constraint == "softplus":
                self.positive.append(name)
                setattr(self, f"{name}_rho", nn.Parameter(torch.tensor(
                    _softplus_inverse(np.asarray(values[name], dtype=np.float64)),
                    dtype=torch.float64)))
            else:
                self.free.append(name)
                setattr(self, name, nn.Parameter(torch.tensor(values[name], dtype=torch.float64)))
        logs = [np.log(np.asarray(values[n], dtype=np.float64)) for n in self.time_constants]
        #: where each time constant sits in log_tau: (offset, shape), shape () for a scalar
        self.time_constant_slices: Dict[str, tuple] = {}
        offset = 0
        for name, a in zip(self.time_constants, logs):
            self.time_constant_slices[name] = (offset, a.shape)
            offset += a.size
        log_tau = torch.tensor(np.concatenate([a.reshape(-1) for a in logs]) if logs else [],
                               dtype=torch.float64)
        self.train_time_constants = train_time_constants
        if train_time_constants:
            self.log_tau = nn.Parameter(log_tau)
        else:
            self.register_buffer("log_tau", log_tau)

    def natural(self) -> Dict[str, torch.Tensor]:
        """The layer's parameters in egret's coordinates (theta > 0, tau > 0), differentiable."""
        out = {name: getattr(self, name) for name in self.free}
        for name in self.positive:
            out[name] = nn.functional.softplus(getattr(self, f"{name}_rho"))
        tau = torch.exp(self.log_tau)
        for name in self.time_constants:
            offset, shape = self.time_constant_slices[name]
            out[name] = tau[offset:offset + int(np.prod(shape))].reshape(shape)
        return out

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):  # type: ignore[override]
        # A state dict saved before time constants were per unit holds one log tau per time
        # constant: each is given to every unit of its layer.
        key = prefix + "log_tau"
        old = state_dict.get(key)
        if old is not None and old.numel() == len(self.time_constants) != self.log_tau.numel():
            state_dict[key] = torch.cat(
                [old[k].reshape(1).expand(int(np.prod(self.time_constant_slices[name][1])))
                 for k, name in enumerate(self.time_constants)])
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


class EventNetwork(nn.Module):
    """An egret network (continuous and discrete EGRU layers, mixed) as a torch module.

    Args:
        config: the network configuration (JSON text or dict, the format of
            ``egret simulate --config``; docs/formats.md). Every layer's family must have a backward
            pass (continuous_egru: exact; discrete_egru: BPTT with its pseudo-derivative).
        train_time_constants: train the time constants of every layer (as exp(log tau)).
        threads: TBB threads for a batch (0: all cores).
        precision: "float" or "double", the scalar egret computes in (default: the
            configuration's "precision", float if absent). Tensors are float64 in both.
        state_regularizer: ``{"weight": w, "margin": 0.05, "detach_threshold": True}``, the EGRU
            paper's term keeping c below the threshold (docs/model.md, The state regulariser).
        activity_regularizer: ``{"weight": w, "target_hz": rate}``, a target event rate.

    With a regulariser, every forward pass also sets :attr:`regularization`: the regularisers'
    mean over the batch as a differentiable 0-d tensor with egret's exact gradient, to add to
    the loss (``loss = criterion(model(samples), y) + model.regularization``).
    Every forward pass sets :attr:`activity`: per layer, the batch's mean
    ``events_per_unit_per_s`` and ``activation_sparsity`` (docs/metrics.md), to print per epoch.
    """

    def __init__(self, config: Union[str, dict], *, train_time_constants: bool = False,
                 threads: int = 0, precision: Optional[str] = None,
                 state_regularizer: Optional[dict] = None,
                 activity_regularizer: Optional[dict] = None):
        super().__init__()
        self.core = _egret.Network(config, precision=precision)
        self.threads = threads
        self.regularizers = {}
        if state_regularizer is not None:
            self.regularizers["state_regularizer"] = dict(state_regularizer)
        if activity_regularizer is not None:
            self.regularizers["activity_regularizer"] = dict(activity_regularizer)
        #: The regularisers of the latest forward pass (0 without any), differentiable.
        self.regularization: torch.Tensor = torch.zeros((), dtype=torch.float64)
        self.activity: Dict[str, list] = {}
        values = self.core.parameters()
        specs = self.core.parameter_specs()

        def of_layer(d, l):
            return {k.split(".", 1)[1]: v for k, v in d.items() if k.startswith(f"layer{l}.")}

        self.layers = nn.ModuleList(
            _LayerParameters(of_layer(values, l), of_layer(specs, l), train_time_constants)
            for l in range(self.core.layers))
        classes = self.core.readout_classes
        self.readout: Optional[nn.Linear] = None
        if classes > 0:
            self.readout = nn.Linear(self.core.units[-1], classes, dtype=torch.float64)
            with torch.no_grad():
                self.readout.weight.copy_(torch.from_numpy(values["readout.W_o"]))
                self.readout.bias.copy_(torch.from_numpy(values["readout.b_o"]))

    def layer_parameters(self) -> Dict[str, torch.Tensor]:
        """All layers' parameters by egret name ("layer0.theta", ...), natural coordinates."""
        out = {}
        for l, layer in enumerate(self.layers):
            for k, v in layer.natural().items():
                out[f"layer{l}.{k}"] = v
        return out

    def traces(self, samples: Union[_egret.Sample, Sequence[_egret.Sample]]) -> torch.Tensor:
        """Readouts of the last layer's output trace, (B, R, units), differentiable."""
        if isinstance(samples, _egret.Sample):
            samples = [samples]
        params = self.layer_parameters()
        names = tuple(params)
        traces, self.regularization = _EventNetworkFunction.apply(
            self.core, list(samples), self.threads, self.regularizers, self.activity, names,
            *params.values())
        return traces

    def forward(self, samples: Union[_egret.Sample, Sequence[_egret.Sample]]) -> torch.Tensor:
        """Logits (B, R, classes) with a readout, else the output-trace readouts (B, R, units)."""
        o = self.traces(samples)
        return self.readout(o) if self.readout is not None else o

    def to_network(self) -> _egret.Network:
        """An :class:`egret.Network` with the current parameters (for simulate, traces, checkpoints)."""
        net = _egret.Network(self.core.config, precision=self.core.precision)
        with torch.no_grad():
            values = {k: (float(v) if v.ndim == 0 else v.detach().cpu().numpy())
                      for k, v in self.layer_parameters().items()}
            if self.readout is not None:
                values["readout.W_o"] = self.readout.weight.detach().cpu().numpy()
                values["readout.b_o"] = self.readout.bias.detach().cpu().numpy()
        net.set_parameters(values)
        return net


class SingleLayer(EventNetwork):
    """One layer of any registered cell family, driven by input events.

    ``settings`` are the family's configuration keys (docs/model.md), as in a configuration
    file: ``SingleLayer("continuous_egru", 4, 6, tau_m=5, init={"weight_scale": 1.5})``.
    Keys not given take the family's documented defaults; an unknown key is an error.
    ``forward(samples)`` returns the readouts of the layer's output trace o(t), (B, R, units);
    compose it with torch modules (e.g. ``nn.Linear`` for logits).
    """

    def __init__(self, layer_type: str, input_channels: int, units: int, *, seed: int = 1,
                 train_time_constants: bool = False, threads: int = 0,
                 precision: Optional[str] = None, state_regularizer: Optional[dict] = None,
                 activity_regularizer: Optional[dict] = None, **settings):
        config = {
            "seed": seed,
            "input_channels": input_channels,
            "layers": [{"type": layer_type, "units": units, **settings}],
        }
        super().__init__(json.dumps(config), train_time_constants=train_time_constants,
                         threads=threads, precision=precision,
                         state_regularizer=state_regularizer,
                         activity_regularizer=activity_regularizer)


class ContinuousEGRU(SingleLayer):
    """One continuous-time EGRU layer: ``SingleLayer("continuous_egru", ...)``; the box gate
    kernel unless ``gate_kernel="exp"`` is given."""

    def __init__(self, input_channels: int, units: int, **kwargs):
        super().__init__("continuous_egru", input_channels, units, **kwargs)


class InterruptibleTraining:
    """Ctrl-C (SIGINT) and SIGTERM as a request to stop cleanly, as ``egret train`` handles them.

    Inside ``with InterruptibleTraining() as stop:`` the first such signal only sets
    ``stop.signal`` (its number; ``bool(stop)`` is then true), which a training loop polls
    between minibatches: it then saves the state of its last complete epoch
    (:func:`save_training_state`), says how to resume and exits with ``stop.exit_status``
    (128 + the signal, the shell's convention). The handler resets itself, so a second Ctrl-C
    raises ``KeyboardInterrupt`` at once. Only the main thread can install signal handlers.
    """

    def __init__(self):
        self.signal: Optional[int] = None
        self._previous = {}

    def _handle(self, signal_number, frame):
        self.signal = signal_number
        _signal.signal(signal_number, self._previous.get(signal_number, _signal.SIG_DFL))

    def __enter__(self) -> "InterruptibleTraining":
        for s in (_signal.SIGINT, _signal.SIGTERM):
            self._previous[s] = _signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc):
        for s, handler in self._previous.items():
            _signal.signal(s, handler)
        return False

    def __bool__(self) -> bool:
        return self.signal is not None

    @property
    def name(self) -> str:
        return _signal.Signals(self.signal).name if self.signal else ""

    @property
    def exit_status(self) -> int:
        return 128 + (self.signal or 0)


def save_training_state(path: str, state: dict) -> None:
    """``torch.save(state, path)`` under a temporary name, renamed into place when complete (a
    crash or a second Ctrl-C never leaves a half-written file)."""
    tmp = f"{path}.tmp-egret"
    torch.save(state, tmp)
    _os.replace(tmp, path)


def load_training_state(path: str) -> dict:
    """The state :func:`save_training_state` wrote (tensors on the CPU)."""
    return torch.load(path, map_location="cpu")


def training_snapshot(model: nn.Module, optimizer: torch.optim.Optimizer, **extra) -> dict:
    """A deep copy of what a resumed run needs from torch: the model's and the optimizer's
    state, and torch's global generator; ``extra`` (epoch, log, numpy generator state, ...) is
    copied too."""
    return _copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                           "torch_rng": torch.get_rng_state(), **extra})


def restore_snapshot(model: nn.Module, optimizer: torch.optim.Optimizer, state: dict) -> dict:
    """Puts a :func:`training_snapshot` back; returns it (for its extra entries)."""
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])
    return state


__all__ = ["EventNetwork", "SingleLayer", "ContinuousEGRU", "EGRU", "to_torch_gru_gate_order",
           "from_torch_gru_gate_order", "InterruptibleTraining", "save_training_state",
           "load_training_state", "training_snapshot", "restore_snapshot"]
