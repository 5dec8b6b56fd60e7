#!/usr/bin/python3
"""egret.torch.EGRU (EvNN's EGRU layer, event-sparse in C++) against torch.nn.GRU and against
EvNN's equations in plain PyTorch (how EvNN runs without its compiled library), per step of a
sequence: forward, and forward + backward. Same script, same thread count for all three.

Settings: N = 256 and 1024 units, D = N inputs, batch 1 and 32, T steps. "activity" is both the
share of nonzero inputs (the input is another EGRU layer's output: sparse, positive) and the
layer's own share of firing units (its thresholds are set by bisection to reach it). The input
needs no gradient unless --input-grad (a first layer; a stacked layer needs it, and its gradient
is a dense product in every implementation). torch's BLAS is printed: Debian's torch uses the
reference BLAS unless libopenblas0-pthread is installed.

usage: PYTHONPATH=build/python /usr/bin/python3 bench/bench_evnn_egru_vs_torch.py
       [--units 256 1024] [--batch 1 32] [--activity 0.02 0.1 0.5] [--steps 100]
       [--threads 2] [--dtype float32|float64] [--reps 3] [--input-grad] [--csv OUT.csv]
       [--figure OUT.png]
"""
import argparse

import torch

import egret.torch as et
from torch_comparison import best_of, blas_name


def evnn_equations(x, W, R, bx, br, thr, gamma, eps):
    """EvNN's recurrence in plain PyTorch (its use_custom_cuda=False path, densely)."""
    T, B, _ = x.shape
    N = thr.shape[0]
    y = torch.zeros(B, N, dtype=x.dtype)
    h = torch.zeros(B, N, dtype=x.dtype)
    a_all = x @ W + bx
    ys = []
    for t in range(T):
        q = y @ R + br
        a = a_all[t]
        z = torch.sigmoid(a[:, :N] + q[:, :N])
        r = torch.sigmoid(a[:, N:2 * N] + q[:, N:2 * N])
        g = torch.tanh(a[:, 2 * N:] + r * q[:, 2 * N:])
        c = z * h + (1 - z) * g
        v = c - thr
        o = _Spike.apply(v, gamma, eps)
        y = o * c
        h = c - o * thr
        ys.append(y)
    return torch.stack(ys)


class _Spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, gamma, eps):
        ctx.save_for_backward(v)
        ctx.gamma, ctx.eps = gamma, eps
        return (v > 0).to(v.dtype)

    @staticmethod
    def backward(ctx, g):
        (v,) = ctx.saved_tensors
        return g * ctx.gamma * torch.clamp(1 - ctx.eps * v.abs(), min=0), None, None


def sparse_input(T, B, D, activity, dtype, gen):
    mask = torch.rand(T, B, D, generator=gen) < activity
    return (torch.rand(T, B, D, generator=gen) * 2 * mask).to(dtype)


def calibrate(layer, x, target):
    """A common threshold for all units so that about `target` of them fire per step."""
    lo, hi = 0.0, 1.0
    with torch.no_grad():
        for _ in range(20):
            mid = 0.5 * (lo + hi)
            layer.thr.fill_(mid)
            _, (_, o, _) = layer(x)
            lo, hi = (mid, hi) if o.mean().item() > target else (lo, mid)
        _, (_, o, _) = layer(x)
    return o.mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--activity", type=float, nargs="+", default=[0.02, 0.1, 0.5])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--input-grad", action="store_true")
    ap.add_argument("--csv", help="also write the table as CSV")
    ap.add_argument("--figure", help="draw the speed-ups against activity (matplotlib)")
    a = ap.parse_args()
    rows = []
    dtype = getattr(torch, a.dtype)
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, BLAS {blas_name()}, {a.threads} threads for all, "
          f"{a.dtype}, T = {a.steps}, input gradient {'on' if a.input_grad else 'off'}; "
          f"ms per step (speed-up of egret)")
    print(f"{'N':>5} {'B':>3} {'act.in':>6} {'act.out':>7} | {'egret fwd':>9} {'GRU fwd':>15} "
          f"{'EvNN-eq fwd':>15} | {'egret f+b':>9} {'GRU f+b':>15} {'EvNN-eq f+b':>15}")
    gen = torch.Generator().manual_seed(1)
    for n in a.units:
        for b in a.batch:
            for act in a.activity:
                torch.manual_seed(n + b)
                layer = et.EGRU(n, n, dtype=dtype, threads=a.threads)
                gru = torch.nn.GRU(n, n, dtype=dtype)
                x = sparse_input(a.steps, b, n, act, dtype, gen)
                out_act = calibrate(layer, x, act)
                W, R, bx, br, thr = (p.detach().clone().requires_grad_(True) for p in (
                    layer.kernel, layer.recurrent_kernel, layer.bias, layer.recurrent_bias,
                    layer.thr))

                def egret_fwd():
                    with torch.no_grad():
                        layer(x)

                def gru_fwd():
                    with torch.no_grad():
                        gru(x)

                def eq_fwd():
                    with torch.no_grad():
                        evnn_equations(x, W, R, bx, br, thr, 0.7, 1.0)

                def egret_fb():
                    xi = x.clone().requires_grad_(a.input_grad)
                    layer(xi)[0].sum().backward()

                def gru_fb():
                    xi = x.clone().requires_grad_(a.input_grad)
                    gru(xi)[0].sum().backward()

                def eq_fb():
                    xi = x.clone().requires_grad_(a.input_grad)
                    evnn_equations(xi, W, R, bx, br, thr, 0.7, 1.0).sum().backward()

                ms = {k: 1e3 * best_of(a.reps, f) / a.steps for k, f in (
                    ("ef", egret_fwd), ("gf", gru_fwd), ("qf", eq_fwd), ("eb", egret_fb),
                    ("gb", gru_fb), ("qb", eq_fb))}
                print(f"{n:>5} {b:>3} {act:>6.2f} {out_act:>7.3f} | {ms['ef']:>9.3f} "
                      f"{ms['gf']:>8.3f} ({ms['gf'] / ms['ef']:>4.1f}x) {ms['qf']:>8.3f} "
                      f"({ms['qf'] / ms['ef']:>4.1f}x) | {ms['eb']:>9.3f} {ms['gb']:>8.3f} "
                      f"({ms['gb'] / ms['eb']:>4.1f}x) {ms['qb']:>8.3f} ({ms['qb'] / ms['eb']:>4.1f}x)",
                      flush=True)
                rows.append((n, b, act, out_act, ms))
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("units,batch,input_activity,output_activity,egret_fwd_ms,gru_fwd_ms,"
                    "evnn_eq_fwd_ms,egret_fb_ms,gru_fb_ms,evnn_eq_fb_ms\n")
            for n, b, act, out_act, ms in rows:
                f.write(f"{n},{b},{act},{out_act:.4f},{ms['ef']:.5f},{ms['gf']:.5f},{ms['qf']:.5f},"
                        f"{ms['eb']:.5f},{ms['gb']:.5f},{ms['qb']:.5f}\n")
    if a.figure:
        draw(rows, a.figure, f"{a.dtype}, {a.threads} threads, BLAS {blas_name().split('/')[-2]}")


def draw(rows, path, subtitle):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (key, base, title) in zip(axes, (("ef", "gf", "forward"), ("eb", "gb", "forward + backward"))):
        for n in sorted({r[0] for r in rows}):
            for b in sorted({r[1] for r in rows}):
                pts = [(r[2], r[4][base] / r[4][key]) for r in rows if r[0] == n and r[1] == b]
                ax.plot(*zip(*pts), marker="o", label=f"N = {n}, batch {b}")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("activity (inputs and units)")
        ax.set_title(title)
    axes[0].set_ylabel("torch.nn.GRU time / egret.torch.EGRU time")
    axes[0].legend(fontsize=8)
    fig.suptitle(subtitle, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
