#!/usr/bin/env python3
"""Independent pure-Python re-derivation of NeuroBench's GRUCell synaptic-op
counting rules (neurobench/metrics/utils/layers/macs.py @ e521c28, gru_cell_macs
+ recurrent_cell_macs + input.binary_inputs), written from the rules described in
neurobench_definitions.md, used only to check the hand count there.

Not NeuroBench code. No dependencies (no numpy / torch on this machine).
Run: python3 gru_handcount_check.py
"""
import math


def nz(v):
    """NeuroBench 'binarize': nonzero -> 1, zero -> 0."""
    return 1 if v != 0 else 0


def is_spiking(x):
    """binary_inputs(): input counts as spikes iff every element is in {-1, 0, 1}.
    For recurrent cells only the first tensor (x) is tested, never h."""
    return all(v in (-1, 0, 1) for v in x)


def gru_counts(W_ih, W_hh, b_ih, b_hh, x, h, dense=False):
    """Return the NeuroBench op count for one GRUCell call (batch 1, h given)."""
    H = len(h)
    # 1) binarize (Dense: everything -> 1)
    f = (lambda v: 1) if dense else nz
    Wi = [[f(w) for w in row] for row in W_ih]
    Wh = [[f(w) for w in row] for row in W_hh]
    bi = [f(b) for b in b_ih]
    bh = [f(b) for b in b_hh]
    xb = [f(v) for v in x]
    hb = [f(v) for v in h]
    # 2) count products W*x and W*h (rows r1..rH, z1..zH, n1..nH)
    out_ih = [sum(w * v for w, v in zip(row, xb)) for row in Wi]
    out_hh = [sum(w * v for w, v in zip(row, hb)) for row in Wh]
    ops = sum(out_ih) + sum(out_hh)
    detail = {"W_ih*x": sum(out_ih), "W_hh*h": sum(out_hh)}
    # 3) gate pre-activation "counts" incl. binarized biases (not counted as ops)
    rzn = [a + b + c + d for a, b, c, d in zip(out_ih, out_hh, bi, bh)]
    r = [nz(v) for v in rzn[0:H]]
    z_cnt = rzn[H:2 * H]                      # NOT yet binarized (quirk below)
    hh_n = [nz(out_hh[2 * H + k] + bh[2 * H + k]) for k in range(H)]
    rn = [nz(r[k] * hh_n[k]) for k in range(H)]   # r * (W_hn h + b_hn)
    ops += sum(rn)
    detail["r*(W_hn h+b_hn)"] = sum(rn)
    # n "nonzero" test as written in NeuroBench (uses out_hh, not out_ih)
    n = [nz(out_hh[2 * H + k] + bi[2 * H + k] + rn[k]) for k in range(H)]
    z_a = [nz(1 - c) for c in z_cnt]          # (1 - z) tested on the raw count
    z = [nz(c) for c in z_cnt]
    t1 = [nz(z_a[k] * n[k]) for k in range(H)]    # (1-z)*n
    t2 = [nz(z[k] * hb[k]) for k in range(H)]     # z*h
    ops += sum(t1) + sum(t2)
    detail["(1-z)*n"] = sum(t1)
    detail["z*h"] = sum(t2)
    return ops, detail


def gru_forward(W_ih, W_hh, b_ih, b_hh, x, h):
    """PyTorch GRUCell maths, float, for activation values."""
    H = len(h)
    sig = lambda v: 1.0 / (1.0 + math.exp(-v))
    gi = [sum(w * v for w, v in zip(row, x)) + b for row, b in zip(W_ih, b_ih)]
    gh = [sum(w * v for w, v in zip(row, h)) + b for row, b in zip(W_hh, b_hh)]
    r = [sig(gi[k] + gh[k]) for k in range(H)]
    z = [sig(gi[H + k] + gh[H + k]) for k in range(H)]
    n = [math.tanh(gi[2 * H + k] + r[k] * gh[2 * H + k]) for k in range(H)]
    return [(1 - z[k]) * n[k] + z[k] * h[k] for k in range(H)]


# ---- worked example (rows: r1 r2 z1 z2 n1 n2) ----
W_ih = [[0.1, 0.4], [0.0, 0.2], [0.3, 0.0], [0.5, 0.1], [0.0, 0.7], [0.2, 0.3]]
W_hh = [[0.2, 0.0], [0.1, 0.1], [0.0, 0.0], [0.4, 0.3], [0.6, 0.0], [0.0, 0.0]]
b_ih = [0.1] * 6
b_hh = [0.1, 0.1, 0.1, 0.1, 0.1, 0.0]
h0 = [0.3, -0.2]

for label, x in (("graded x", [0.5, 0.0]), ("binary x", [1.0, 0.0])):
    eff, det = gru_counts(W_ih, W_hh, b_ih, b_hh, x, h0)
    dense, ddet = gru_counts(W_ih, W_hh, b_ih, b_hh, x, h0, dense=True)
    kind = "Effective_ACs" if is_spiking(x) else "Effective_MACs"
    h1 = gru_forward(W_ih, W_hh, b_ih, b_hh, x, h0)
    relu = [max(0.0, v) for v in h1]
    print(f"{label}: x={x} h={h0}")
    print(f"  {kind} = {eff}  {det}")
    print(f"  Dense = {dense}  {ddet}")
    print(f"  h1 = {[round(v, 4) for v in h1]}  ReLU(h1) = {[round(v, 4) for v in relu]}")

# ---- sanity check vs NeuroBench's own unit test (tests/test_metrics.py):
# simple_GRU: GRUCell(25, 5, bias=True), x and h all ones, random (nonzero)
# weights -> expected 465 Effective_MACs per sample.
I, H = 25, 5
ones = lambda r, c: [[0.5] * c for _ in range(r)]
e, d = gru_counts(ones(3 * H, I), ones(3 * H, H), [0.5] * (3 * H), [0.5] * (3 * H),
                  [1.0] * I, [1.0] * H)
print("NeuroBench test_metrics simple_GRU check (expect 465):", e, d)

# ---- quirk demo: (1 - z) is tested on the raw contribution COUNT of z's
# pre-activation. Zero both z1 biases so z1 has exactly one nonzero contribution
# (W_iz1,1 * x1): NeuroBench then treats (1 - z1) as zero and skips (1-z1)*n1.
b_ih_q = [0.1, 0.1, 0.0, 0.1, 0.1, 0.1]
b_hh_q = [0.1, 0.1, 0.0, 0.1, 0.1, 0.0]
e, d = gru_counts(W_ih, W_hh, b_ih_q, b_hh_q, [0.5, 0.0], h0)
print("quirk variant (b_iz1 = b_hz1 = 0):", e, d)
