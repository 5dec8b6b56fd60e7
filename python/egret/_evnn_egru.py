"""``egret.torch.EGRU``: a drop-in for EvNN's ``evnn_pytorch.EGRU`` that runs event-sparse.

Same constructor arguments, parameter names and shapes (``kernel`` (C, 3N), ``recurrent_kernel``
(N, 3N), ``bias`` (3N), ``recurrent_bias`` (3N), ``thr`` (N), gate order [z, r, g], and EvNN's
frozen ``_max_norm``, ``dampening_factor``, ``pseudo_derivative_support``), so
``load_state_dict(evnn_model.state_dict())`` works; same forward: ``(output, (h, o, trace))``
with every step, (T, B, N) or (B, T, N) with ``batch_first``; ``state`` is y_0, (1, B, N).
The equations are EvNN's (docs/model.md, "EvNN convention"; docs/evnn_egru.md): the
recurrent input is y, the memory h starts at 0, thresholds are clamped to [0, 1] in place at
every forward call, the pseudo-derivative is ``dampening_factor * max(0, 1 -
pseudo_derivative_support * |v|)``.

Underneath, C++ (egret._egret.evnn_egru_forward) adds only the kernel rows of nonzero inputs and
the recurrent rows of units that fired, in both passes; batch rows run in parallel (TBB) with
the GIL released. CPU tensors, float32 or float64.

Differences from EvNN, on purpose: zoneout in eval mode uses the expectation (as EvNN's
compiled path) and draws no random numbers; ``grad_clip`` rescales the layer's parameter and
state gradients by their global norm as EvNN does, without EvNN's uninitialised norm entry;
the backward pass works in eval mode too.
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import nn

from . import _egret

_GATES = ("z", "r", "g")


class _EvnnEgruFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y0, kernel, recurrent_kernel, bias, recurrent_bias, thr,  # type: ignore[override]
                zoneout_weights, dampening, support, threads, max_norm):
        def arr(t):
            return None if t is None else t.detach().contiguous().numpy()
        weights = [arr(t) for t in (kernel, recurrent_kernel, bias, recurrent_bias, thr)]
        y, h, o, trace, tape = _egret.evnn_egru_forward(
            arr(x), arr(y0), *weights, zoneout=arr(zoneout_weights), dampening_factor=dampening,
            pseudo_derivative_support=support, threads=threads)
        ctx.tape = tape
        ctx.weights = weights
        ctx.settings = (dampening, support, threads, max_norm, y0 is not None)
        ctx.set_materialize_grads(False)  # unused outputs' gradients arrive as None
        return tuple(torch.from_numpy(a) for a in (y, h, o, trace))

    @staticmethod
    def backward(ctx, d_y, d_h, d_o, d_trace):  # type: ignore[override]
        tape, ctx.tape = ctx.tape, None
        if tape is None:
            raise RuntimeError("egret.torch.EGRU: backward through the same forward pass twice "
                               "(use retain_graph with a new forward instead)")
        dampening, support, threads, max_norm, has_state = ctx.settings

        def arr(t):
            return None if t is None else t.detach().contiguous().numpy()
        dx, dy0, *dw = tape.backward(
            *ctx.weights, dampening_factor=dampening, pseudo_derivative_support=support,
            d_y=arr(d_y), d_h=arr(d_h), d_o=arr(d_o), d_trace=arr(d_trace),
            want_input=ctx.needs_input_grad[0], want_state=has_state and ctx.needs_input_grad[1],
            threads=threads)
        grads = [None if g is None else torch.from_numpy(g) for g in (dx, dy0, *dw)]
        if max_norm > 0:  # EvNN's grad_clip: all but the input gradient, by their global norm
            clipped = [g for g in grads[1:] if g is not None]
            norm = torch.sqrt(sum((g * g).sum() for g in clipped))
            scale = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
            grads[1:] = [None if g is None else g * scale for g in grads[1:]]
        return (*grads, None, None, None, None, None)


class EGRU(nn.Module):
    """One EGRU layer in EvNN's convention, event-sparse (see the module docstring).

    Args are EvNN's: ``input_size``, ``hidden_size``, ``batch_first``, ``dropout``
    (DropConnect on the recurrent kernel, training only), ``zoneout``, ``dampening_factor``,
    ``pseudo_derivative_support``, ``thr_mean`` (initial thresholds ~ Beta(3 m / (1 - m), 3)),
    ``weight_initialization_gain`` (Xavier normal), ``return_state_sequence`` (accepted; every
    step is returned, as EvNN does), ``grad_clip`` (global-norm rescaling of the layer's
    gradients), ``use_custom_cuda`` (accepted, ignored). egret's own: ``threads`` (TBB threads
    over the batch, 0: all cores), ``dtype``.
    """

    def __init__(self, input_size: int, hidden_size: int, batch_first: bool = False,
                 dropout: float = 0.0, zoneout: float = 0.0, dampening_factor: float = 0.7,
                 pseudo_derivative_support: float = 1.0, thr_mean: float = 0.3,
                 weight_initialization_gain: float = 1.0, return_state_sequence: bool = False,
                 grad_clip: Optional[float] = None, use_custom_cuda: bool = True,
                 threads: int = 0, dtype: Optional[torch.dtype] = None):
        super().__init__()
        if input_size < 1 or hidden_size < 1:
            raise ValueError("EGRU: input_size and hidden_size must be >= 1")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"EGRU: dropout={dropout} must be in [0, 1]")
        if not 0.0 <= zoneout <= 1.0:
            raise ValueError(f"EGRU: zoneout={zoneout} must be in [0, 1]")
        if not 0.0 < thr_mean < 1.0:
            raise ValueError(f"EGRU: thr_mean={thr_mean} must be in (0, 1)")
        if not (dampening_factor >= 0 and pseudo_derivative_support > 0):
            raise ValueError("EGRU: dampening_factor must be >= 0, pseudo_derivative_support > 0")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.batch_first, self.dropout, self.zoneout = batch_first, dropout, zoneout
        self.thr_mean, self.weight_initialization_gain = thr_mean, weight_initialization_gain
        self.return_state_sequence, self.use_custom_cuda = return_state_sequence, use_custom_cuda
        self.threads = threads
        kw = {"dtype": dtype or torch.get_default_dtype()}
        frozen = lambda v: nn.Parameter(torch.tensor([float(v)], **kw), requires_grad=False)  # noqa: E731
        # Registration order as EvNN's, so state_dict keys and parameters() line up.
        self._max_norm = frozen(grad_clip if grad_clip else -1.0)
        self.kernel = nn.Parameter(torch.empty(input_size, 3 * hidden_size, **kw))
        self.recurrent_kernel = nn.Parameter(torch.empty(hidden_size, 3 * hidden_size, **kw))
        self.bias = nn.Parameter(torch.empty(3 * hidden_size, **kw))
        self.recurrent_bias = nn.Parameter(torch.empty(3 * hidden_size, **kw))
        self.dampening_factor = frozen(dampening_factor)
        self.pseudo_derivative_support = frozen(pseudo_derivative_support)
        self.thr = nn.Parameter(torch.empty(hidden_size, **kw))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """EvNN's initialisation: Xavier normal (gain) kernels, zero biases, Beta thresholds."""
        with torch.no_grad():
            nn.init.xavier_normal_(self.kernel, gain=self.weight_initialization_gain)
            nn.init.xavier_normal_(self.recurrent_kernel, gain=self.weight_initialization_gain)
            self.bias.zero_()
            self.recurrent_bias.zero_()
            alpha = 3.0 * self.thr_mean / (1.0 - self.thr_mean)
            beta = torch.distributions.Beta(torch.tensor(alpha), torch.tensor(3.0))
            self.thr.copy_(beta.sample((self.hidden_size,)))

    def forward(self, input: torch.Tensor, state: Optional[torch.Tensor] = None,
                lengths=None) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor,
                                                           torch.Tensor]]:
        """input (T, B, C) or (B, T, C); state: y_0, (1, B, N) or None. Returns
        ``output, (h, o, trace)``, every step, in the input's layout."""
        x = input.transpose(0, 1) if self.batch_first else input
        if x.dim() != 3 or x.shape[2] != self.input_size:
            raise ValueError(f"EGRU: input must be (T, B, {self.input_size})"
                             f"{' with batch_first' if self.batch_first else ''}, "
                             f"got {tuple(input.shape)}")
        steps, batch = x.shape[0], x.shape[1]
        y0 = None
        if state is not None:
            if tuple(state.shape) != (1, batch, self.hidden_size):
                raise ValueError(f"EGRU: state must be (1, {batch}, {self.hidden_size}), got "
                                 f"{tuple(state.shape)}")
            y0 = state[0]
        with torch.no_grad():
            self.thr.clamp_(0.0, 1.0)
        zw = None
        if self.zoneout > 0:
            shape = (steps, batch, self.hidden_size)
            zw = (torch.bernoulli(torch.full(shape, 1.0 - self.zoneout, dtype=x.dtype))
                  if self.training else torch.full(shape, 1.0 - self.zoneout, dtype=x.dtype))
        rk = (nn.functional.dropout(self.recurrent_kernel, p=self.dropout, training=True)
              if self.training and self.dropout > 0 else self.recurrent_kernel)
        y, h, o, trace = _EvnnEgruFunction.apply(
            x, y0, self.kernel, rk, self.bias, self.recurrent_bias, self.thr, zw,
            float(self.dampening_factor), float(self.pseudo_derivative_support), self.threads,
            float(self._max_norm))
        if self.batch_first:
            y, h, o, trace = (t.transpose(0, 1) for t in (y, h, o, trace))
        return y, (h, o, trace)

    def to_native_weights(self) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(weight_ih, weight_hh, bias_ih, bias_hh)`` for ``torch.nn.GRU`` (gate order
        [r, z, n]; EvNN's [z, r, g] is reordered, unlike EvNN's own to_native_weights)."""
        return tuple(to_torch_gru_gate_order(t.detach())  # type: ignore[return-value]
                     for t in (self.kernel.t(), self.recurrent_kernel.t(), self.bias,
                               self.recurrent_bias))

    def from_native_weights(self, weight_ih: torch.Tensor, weight_hh: torch.Tensor,
                            bias_ih: torch.Tensor, bias_hh: torch.Tensor) -> None:
        """Loads ``torch.nn.GRU`` weights (gate order [r, z, n]) into this layer in place."""
        with torch.no_grad():
            self.kernel.copy_(from_torch_gru_gate_order(weight_ih).t())
            self.recurrent_kernel.copy_(from_torch_gru_gate_order(weight_hh).t())
            self.bias.copy_(from_torch_gru_gate_order(bias_ih))
            self.recurrent_bias.copy_(from_torch_gru_gate_order(bias_hh))


def to_torch_gru_gate_order(t: torch.Tensor) -> torch.Tensor:
    """Rows (or entries) in EvNN's gate order [z, r, g] -> torch.nn.GRU's [r, z, n]."""
    z, r, g = t.chunk(3, dim=0)
    return torch.cat([r, z, g], dim=0).contiguous()


def from_torch_gru_gate_order(t: torch.Tensor) -> torch.Tensor:
    """torch.nn.GRU's [r, z, n] -> EvNN's [z, r, g]."""
    r, z, n = t.chunk(3, dim=0)
    return torch.cat([z, r, n], dim=0).contiguous()
