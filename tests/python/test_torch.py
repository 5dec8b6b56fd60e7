"""egret.torch: gradients through torch autograd equal egret's C++ gradients and finite
differences; composition with torch modules and losses; errors; and data-parallel training
with torch.distributed (2 gloo processes on localhost) equal to one process on the global batch."""
import json
import os
import pathlib
import random
import re
import signal
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import egret
import egret.torch as et
from conftest import BUILD, ROOT


def config(classes=3):
    return {
        "precision": "double", "seed": 5, "input_channels": 4,
        "layers": [
            {"type": "continuous_egru", "units": 5, "tau_m": 5, "tau_o": 6, "window_input": 3,
             "window_recurrent": 2, "threshold": 0.3,
             "init": {"weight_scale": 1.5, "bias_z": 0.8, "bias_spread": 0.3}},
            {"type": "continuous_egru", "units": 3, "tau_m": 4, "tau_o": 5, "window_input": 4,
             "threshold": 0.3, "init": {"weight_scale": 1.5, "bias_z": 0.8}}],
        "readout_classes": classes,
    }


def samples(count=5):
    out = []
    for k in range(count):
        rng = np.random.default_rng(k)
        t = np.sort(rng.uniform(0, 40, 100))
        out.append(egret.Sample(t, rng.integers(0, 4, 100), rng.uniform(0.5, 1.5, 100), channels=4,
                                end_time=40.0, readout_windows=[(10.0, 25.0), (22.0, 39.0)],
                                labels=[k % 3, (k + 1) % 3]))
    return out


def ce(logits, batch):
    y = torch.tensor([s.labels for s in batch])
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def test_torch_gradients_equal_egret_cpp_gradients():
    batch = samples()
    model = et.EventNetwork(config(), train_time_constants=True)
    loss = ce(model(batch), batch)
    loss.backward()
    ref_loss, ref, _ = egret.Network(config()).loss_and_gradient(batch)
    assert loss.item() == pytest.approx(ref_loss, rel=1e-14)
    checked = 0
    for l, layer in enumerate(model.layers):
        for name in ("U_u", "U_r", "U_z", "V_u", "V_r", "V_z", "b_u", "b_r", "b_z"):
            np.testing.assert_allclose(getattr(layer, name).grad.numpy(), ref[f"layer{l}.{name}"],
                                       rtol=1e-12, atol=1e-16, err_msg=f"layer{l}.{name}")
            checked += getattr(layer, name).numel()
        # chain rule of the reparametrisations: theta = softplus(rho), tau = exp(log tau)
        rho = layer.theta_rho.detach().numpy()
        np.testing.assert_allclose(layer.theta_rho.grad.numpy(),
                                   ref[f"layer{l}.theta"] / (1 + np.exp(-rho)), rtol=1e-12)
        # log_tau: every unit's log tau_m, then every unit's log tau_o
        tau = np.exp(layer.log_tau.detach().numpy())
        n = rho.size
        assert tau.shape == (2 * n,)
        np.testing.assert_allclose(layer.log_tau.grad.numpy(),
                                   np.concatenate([ref[f"layer{l}.tau_m"] * tau[:n],
                                                   ref[f"layer{l}.tau_o"] * tau[n:]]),
                                   rtol=1e-12, atol=1e-300)
        checked += rho.size + tau.size
    np.testing.assert_allclose(model.readout.weight.grad.numpy(), ref["readout.W_o"], rtol=1e-12,
                               atol=1e-16)
    np.testing.assert_allclose(model.readout.bias.grad.numpy(), ref["readout.b_o"], rtol=1e-12,
                               atol=1e-16)
    assert checked > 150


def test_torch_gradients_equal_finite_differences():
    batch = samples(3)
    model = et.EventNetwork(config(), train_time_constants=True)
    loss = ce(model(batch), batch)
    loss.backward()
    reference_events = [r["unit"] for r in model.to_network().simulate_batch(batch)]
    rng = np.random.default_rng(0)
    checked, worst = 0, 0.0
    def central_differences(p, idx, h):
        """The central differences at h and h/2, or None if the units that fire change."""
        values = []
        for step in (h, -h, h / 2, -h / 2):
            with torch.no_grad():
                old = p[idx].item()
                p[idx] = old + step
                same = all(np.array_equal(r["unit"], ref) for r, ref in zip(
                    model.to_network().simulate_batch(batch), reference_events))
                values.append(ce(model(batch), batch).item())
                p[idx] = old
            if not same:
                return None
        return (values[0] - values[1]) / (2 * h), (values[2] - values[3]) / h

    for name, p in model.named_parameters():
        for _ in range(3):
            idx = tuple(int(rng.integers(0, n)) for n in p.shape)
            if ".V_" in name and idx[0] == idx[1]:
                # Without self-recurrence (the default) the diagonal of V is no parameter: its
                # gradient is 0 and the layer refuses a value for it.
                assert p.grad[idx].item() == 0.0
                with torch.no_grad():
                    p[idx] += 1e-5
                    with pytest.raises(ValueError, match="self-recurrence"):
                        model(batch)
                    p[idx] -= 1e-5
                continue
            # The largest step whose two differences agree: an event that passes a release or
            # another layer's event within +-h keeps the units' sequence but bends the loss,
            # and then the differences at h and h/2 disagree.
            fd = None
            for h in (1e-5, 1e-6, 1e-7):
                d = central_differences(p, idx, h)
                if d is not None and abs(d[0] - d[1]) <= 1e-4 * max(abs(d[0]), abs(d[1]), 1e-4):
                    fd = (4 * d[1] - d[0]) / 3
                    break
            if fd is None:
                continue
            g = p.grad[idx].item()
            err = abs(g - fd) / max(abs(g), abs(fd), 1e-4)
            worst = max(worst, err)
            checked += 1
            assert err < 1e-5, f"{name}{idx}: autograd {g} vs finite differences {fd}"
    assert checked >= 30
    print(f"egret.torch: {checked} entries vs finite differences, worst relative error {worst:.2e}")


def test_continuous_egru_composes_with_torch_modules():
    torch.manual_seed(0)
    layer = et.ContinuousEGRU(4, 6, tau_m=5, tau_o=6, window_input=3, window_recurrent=2,
                              init={"weight_scale": 1.5, "bias_z": 0.8}, seed=2)
    head = torch.nn.Linear(6, 2, dtype=torch.float64)
    batch = samples(4)
    traces = layer(batch)
    assert traces.shape == (4, 2, 6) and layer.readout is None
    target = torch.linspace(-1, 1, 16, dtype=torch.float64).reshape(4, 2, 2)
    # a loss on the traces themselves plus one on a torch head: both reach egret's backward
    loss = torch.nn.functional.mse_loss(head(traces), target) + 0.1 * traces.pow(2).mean()
    loss.backward()
    g = layer.layers[0].U_z.grad.clone()
    assert g.abs().sum() > 0
    # the same gradient through egret's forward/backward with dL/dtraces computed by hand
    with torch.no_grad():
        o = traces.detach().clone().requires_grad_(True)
    l2 = torch.nn.functional.mse_loss(head(o), target) + 0.1 * o.pow(2).mean()
    (d_traces,) = torch.autograd.grad(l2, o)
    fb = layer.core.forward(batch)
    ref = fb.backward(d_traces=d_traces.numpy())
    np.testing.assert_allclose(g.numpy(), ref["layer0.U_z"], rtol=1e-12, atol=1e-16)
    # torch optimizers and schedulers drive the parameters
    opt = torch.optim.SGD(list(layer.parameters()) + list(head.parameters()), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    before = layer.layers[0].U_z.detach().clone()
    opt.step()
    sched.step()
    assert torch.allclose(layer.layers[0].U_z.detach(), before - 0.1 * g)
    assert opt.param_groups[0]["lr"] == 0.05


def test_mixed_continuous_and_discrete_network_trains_through_torch():
    """A discrete layer after a continuous one: the torch module's gradients (theta through
    softplus, tau_o through exp) equal egret's C++ gradients (tests/python/
    test_discrete_egru_gradients.py checks those against autograd of the equations)."""
    cfg = config()
    cfg["layers"][1] = {"type": "discrete_egru", "units": 3, "threshold": 0.1, "dt": 1.0,
                        "tau_o": 5, "init": {"weight_scale": 2.0, "bias_z": 0.3}}
    batch = samples()
    model = et.EventNetwork(cfg, train_time_constants=True)
    assert model.layers[1].time_constants == ["tau_o"]
    loss = ce(model(batch), batch)
    loss.backward()
    ref_loss, ref, _ = egret.Network(cfg).loss_and_gradient(batch)
    assert loss.item() == pytest.approx(ref_loss, rel=1e-14)
    layer = model.layers[1]
    for name in ("U_u", "U_r", "U_z", "V_u", "V_r", "V_z", "b_u", "b_r", "b_z"):
        np.testing.assert_allclose(getattr(layer, name).grad.numpy(), ref[f"layer1.{name}"],
                                   rtol=1e-12, atol=1e-16, err_msg=name)
    assert np.abs(ref["layer1.U_z"]).max() > 0
    rho = layer.theta_rho.detach().numpy()
    np.testing.assert_allclose(layer.theta_rho.grad.numpy(),
                               ref["layer1.theta"] / (1 + np.exp(-rho)), rtol=1e-12, atol=1e-16)
    tau = np.exp(layer.log_tau.detach().numpy())
    assert tau.shape == rho.shape  # tau_o: one per unit
    np.testing.assert_allclose(layer.log_tau.grad.numpy(), ref["layer1.tau_o"] * tau, rtol=1e-12)


def test_torch_errors():
    model = et.EventNetwork(config())
    with pytest.raises(ValueError, match="expected an egret.Sample or a sequence"):
        model([np.zeros(3)])
    out = model(samples(2))
    out.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="backward through the same forward pass twice"):
        out.sum().backward()
    with torch.no_grad():
        model.layers[0].U_u[0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"layer0.U_u: NaN or infinite entry at index 0"):
        model(samples(1))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def abort_processes_naming(marker):
    """SIGABRT to every process whose command line names `marker` (with --spawn, the workers
    too, which run in their own sessions): with PYTHONFAULTHANDLER each prints where it waited."""
    for cmdline in pathlib.Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                os.kill(int(cmdline.parent.name), signal.SIGABRT)
        except OSError:  # gone meanwhile
            pass


def finish(p, marker, timeout=300):
    """p's (stdout, stderr). On a timeout the processes naming `marker` are aborted and the test
    fails showing where they waited."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        abort_processes_naming(marker)
        out, err = p.communicate(timeout=60)
        pytest.fail(f"{p.args} timed out after {timeout} s; where it waited:\n{out}\n{err}")


def test_distributed_data_parallel_equals_one_process(tmp_path):
    script = ROOT / "examples" / "python" / "distributed_delay_copy.py"
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()), WORLD_SIZE="2", PYTHONFAULTHANDLER="1")
    # Double: the claim is equality within double rounding (float sums in another order differ
    # at 1e-9).
    args = ["--steps", "12", "--global-batch", "8", "--precision", "double"]
    # --state names tmp_path in rank 1's command line too, for abort_processes_naming.
    procs = [subprocess.Popen([sys.executable, str(script), *args, "--state",
                               str(tmp_path / "unused.pt")]
                              + (["--save", str(tmp_path / "two.npz")] if rank == 0 else []),
                              env=dict(env, RANK=str(rank)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    for p in procs:
        out, err = finish(p, str(tmp_path))
        assert p.returncode == 0, err
    single_env = {k: v for k, v in env.items() if k not in ("WORLD_SIZE", "RANK")}
    for batch, name in (("8", "one.npz"), ("4", "half.npz")):
        r = subprocess.Popen([sys.executable, str(script), "--steps", "12", "--global-batch", batch,
                              "--precision", "double", "--save", str(tmp_path / name)],
                             env=single_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        _, err = finish(r, str(tmp_path))
        assert r.returncode == 0, err
    two, one, half = (np.load(tmp_path / n) for n in ("two.npz", "one.npz", "half.npz"))
    initial = et.EventNetwork({k: v for k, v in json.loads(
        (ROOT / "examples" / "delay_copy.json").read_text()).items()
        if k not in ("task", "training", "output")}).state_dict()
    diff = max(np.abs(two[k] - one[k]).max() for k in one)
    moved = max(np.abs(one[k] - initial[k].numpy()).max() for k in one)
    other = max(np.abs(half[k] - one[k]).max() for k in one)
    print(f"DDP (2 processes) vs one process: max parameter difference {diff:.2e}; "
          f"parameters moved by up to {moved:.2e}; a different batch moves them {other:.2e} apart")
    assert moved > 1e-2
    assert other > 1e-4  # the comparison can tell different training runs apart
    assert diff < 1e-12

    # Interrupted: Ctrl-C to the spawner after a random step; the workers agree on it, rank 0
    # saves, all exit 130; resumed as told, the parameters equal the uninterrupted two-process
    # run's bit for bit. The signal is sent when rank 0's line for that step is read: on a loaded
    # machine the last steps (about 60 ms each) can all end before it arrives. Then the run is
    # complete and must say so and equal the uninterrupted run, and the interruption is tried
    # again after step 1, with 11 steps to spare.
    cut_args = [*args, "--spawn", "2", "--log-every", "1", "--state", str(tmp_path / "state.pt"),
                "--save", str(tmp_path / "cut.npz")]
    for step in (random.Random().randint(1, 10), 1):
        p = subprocess.Popen([sys.executable, str(script), *cut_args], env=single_env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=tmp_path)
        out = []
        # Reading lines has no timeout of its own: a run that hangs is aborted after 300 s, and
        # the assertions below show where it waited.
        watchdog = threading.Timer(300, abort_processes_naming, [str(tmp_path)])
        watchdog.start()
        for line in p.stdout:
            out.append(line)
            if line.startswith(f"step {step}/12:"):
                p.send_signal(signal.SIGINT)
        watchdog.cancel()
        p.wait(timeout=300)
        out = "".join(out)
        if p.returncode == 130 or step == 1:
            break
        assert p.returncode == 0 and "step 12/12:" in out, (step, out, p.stderr.read())
        late = np.load(tmp_path / "cut.npz")
        assert all(np.array_equal(late[k], two[k]) for k in two), step
        (tmp_path / "cut.npz").unlink()
    assert p.returncode == 130, (step, out, p.stderr.read())
    m = re.search(r"SIGINT before step (\d+): wrote \S+state.pt after step (\d+)", out)
    assert m and int(m.group(2)) >= step, (step, out)
    assert not (tmp_path / "cut.npz").exists()
    resume = re.search(r"^resume with: (.*)$", out, re.M).group(1).split()
    assert resume[-2:] == ["--resume", str(tmp_path / "state.pt")] and "--spawn" in resume
    r = subprocess.Popen(resume, env=single_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=tmp_path)
    r_out, r_err = finish(r, str(tmp_path))
    assert r.returncode == 0, r_err
    assert f"resuming from {tmp_path / 'state.pt'} after step {m.group(2)}" in r_out
    cut = np.load(tmp_path / "cut.npz")
    assert all(np.array_equal(cut[k], two[k]) for k in two), step


def test_float32_model_runs_and_matches_float64():
    batch = samples(3)
    ref = et.EventNetwork(config())
    lp = et.EventNetwork(config()).float()
    out = lp(batch)
    assert out.dtype == torch.float32
    ce(out, batch).backward()
    ce(ref(batch), batch).backward()
    g32, g64 = lp.layers[0].U_z.grad, ref.layers[0].U_z.grad
    assert g32.dtype == torch.float32
    # float32 parameters (rounded) and a float32 readout: close to the float64 gradient
    np.testing.assert_allclose(g32.double().numpy(), g64.numpy(), rtol=1e-3, atol=1e-6)


REGULARIZERS = {"state_regularizer": {"weight": 2.0, "margin": 0.05, "detach_threshold": False},
                "activity_regularizer": {"weight": 0.3, "target_hz": 20.0}}


def test_regularizers_through_torch_equal_loss_and_gradient():
    """model.regularization (the mean of both terms over the batch) and its gradient, added to
    the loss through torch, equal Network.loss_and_gradient with the same regularisers (whose
    terms are checked against finite differences in C++ and autograd in Python)."""
    batch = samples()
    model = et.EventNetwork(config(), **REGULARIZERS)
    task = ce(model(batch), batch)
    assert model.regularization.requires_grad and model.regularization.item() > 0.05
    (task + model.regularization).backward()
    ref_loss, ref, stats = egret.Network(config()).loss_and_gradient(batch, **REGULARIZERS)
    assert model.regularization.item() == pytest.approx(
        stats["state_regularizer"] + stats["activity_regularizer"], rel=1e-13)
    assert (task + model.regularization).item() == pytest.approx(ref_loss, rel=1e-13)
    for l, layer in enumerate(model.layers):
        for name in ("U_u", "U_z", "V_u", "V_z", "b_u", "b_r", "b_z"):
            np.testing.assert_allclose(getattr(layer, name).grad.numpy(), ref[f"layer{l}.{name}"],
                                       rtol=1e-11, atol=1e-15, err_msg=f"layer{l}.{name}")
        rho = layer.theta_rho.detach().numpy()
        np.testing.assert_allclose(layer.theta_rho.grad.numpy(),
                                   ref[f"layer{l}.theta"] / (1 + np.exp(-rho)), rtol=1e-11)


def test_activity_regularizer_lowers_activity_in_training():
    """Eight Adam steps on the same batch with the loss plus the activity regulariser (target
    5 events per unit per second) and, as the control, the loss alone: the hidden layers' events
    fall with the term and rise without it."""
    batch = samples()

    def events_after(regularizers):
        torch.manual_seed(0)
        model = et.EventNetwork(config(), **regularizers)
        opt = torch.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(8):
            opt.zero_grad()
            (ce(model(batch), batch) + model.regularization).backward()
            opt.step()
        return sum(int(sum(r["events_per_layer"])) for r in model.to_network().simulate_batch(batch))

    before = sum(int(sum(r["events_per_layer"]))
                 for r in egret.Network(config()).simulate_batch(batch))
    with_term = events_after({"activity_regularizer": {"weight": 1.0, "target_hz": 5.0}})
    without = events_after({})
    print(f"hidden events on 5 samples: {before} before; after 8 steps {with_term} with the "
          f"activity term, {without} without")
    assert with_term < 0.5 * before
    assert without > before


def test_a_tick_family_trains_its_activity_down_and_forward_reports_it():
    """The activity term on a LIF layer (a straight-through count, docs/adjoint.md section 4):
    eight Adam steps with it cut the spikes to under a quarter, and to under half of the same
    steps without it; model.activity after each
    forward pass is the batch's mean rate and sparsity, as simulate_batch counts them."""
    batch = samples()
    cfg = {"precision": "double", "seed": 2, "input_channels": 4, "readout_classes": 3,
           "layers": [{"type": "lif", "units": 8, "dt": 1.0, "tau_mem": 5, "tau_o": 6,
                       "threshold": 0.5, "init": {"weight_scale": 3.0, "bias": 0.3}}]}

    def train(regularizers):
        torch.manual_seed(0)
        model = et.EventNetwork(cfg, **regularizers)
        opt = torch.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(8):
            opt.zero_grad()
            (ce(model(batch), batch) + model.regularization).backward()
            opt.step()
        return model

    def rate(net):
        return np.mean([r["layer_counts"][0]["events_per_unit_per_s"]
                        for r in net.simulate_batch(batch)])

    before = rate(egret.Network(cfg))
    model = train({"activity_regularizer": {"weight": 1.0, "target_hz": 20.0}})
    with_term = rate(model.to_network())
    without = rate(train({}).to_network())
    print(f"LIF events per unit per s: {before:.0f} before; after 8 steps {with_term:.0f} with "
          f"the activity term, {without:.0f} without")
    assert before > 200 and with_term < 0.25 * before and with_term < 0.5 * without
    with torch.no_grad():
        model(batch)
    sims = model.to_network().simulate_batch(batch)
    assert model.activity["events_per_unit_per_s"] == [pytest.approx(with_term, rel=1e-12)]
    assert model.activity["activation_sparsity"] == [pytest.approx(np.mean(
        [r["layer_counts"][0]["metrics"]["ActivationSparsity"] for r in sims]), rel=1e-12)]


def test_regularizer_errors_are_clear():
    """A state term on a network without one (LIF has no state c below a threshold), an unknown
    key and a negative weight are ValueErrors naming the problem, before any sample runs."""
    batch = samples(1)
    lif_cfg = {"precision": "double", "seed": 2, "input_channels": 4, "readout_classes": 3,
               "layers": [{"type": "lif", "units": 8, "dt": 1.0}]}
    with pytest.raises(ValueError, match="state_regularizer: no layer of this network has the "
                                         "state term"):
        egret.Network(lif_cfg).loss_and_gradient(batch, state_regularizer={"weight": 1.0})
    with pytest.raises(ValueError, match="state_regularizer: unknown key 'wieght'"):
        egret.Network(config()).loss_and_gradient(batch, state_regularizer={"wieght": 1.0})
    with pytest.raises(ValueError, match=r"activity_regularizer.weight must be >= 0"):
        egret.Network(config()).loss_and_gradient(
            batch, activity_regularizer={"weight": -1.0, "target_hz": 5.0})


def test_state_dict_with_one_log_tau_per_time_constant_still_loads():
    """Before time constants were per unit, a continuous layer's log_tau held [log tau_m,
    log tau_o]. Such a state dict loads with each value given to every unit of the layer."""
    model = et.EventNetwork(config(), train_time_constants=True)
    state = model.state_dict()
    old = {k: v for k, v in state.items()}
    old["layers.0.log_tau"] = torch.tensor([np.log(4.0), np.log(7.5)], dtype=torch.float64)
    model.load_state_dict(old)
    p = model.layer_parameters()
    n = model.layers[0].theta_rho.numel()
    np.testing.assert_allclose(p["layer0.tau_m"].detach().numpy(), np.full(n, 4.0), rtol=1e-15)
    np.testing.assert_allclose(p["layer0.tau_o"].detach().numpy(), np.full(n, 7.5), rtol=1e-15)
    np.testing.assert_array_equal(model.to_network().parameters()["layer0.tau_m"], p["layer0.tau_m"].detach().numpy())
