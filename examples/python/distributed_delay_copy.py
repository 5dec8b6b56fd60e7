#!/usr/bin/python3
"""Data-parallel training of the delay-copy network with torch.distributed (gloo backend).

Every process holds a replica of the egret.torch model wrapped in
torch.nn.parallel.DistributedDataParallel; each step, the global batch of --global-batch trials
is split into equal contiguous shares, every process runs its share through egret's event-driven
forward and exact backward pass, and DDP averages the gradients across processes (all-reduce)
before the identical Adam steps. The result equals single-process training on the global batch.

The process group is configured by the usual environment variables (what `torchrun` sets):
RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT. Without them the script runs as a single process.

On one machine, two processes: `--spawn 2` starts them (on 127.0.0.1, a free port), or by hand:
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=0 python3 distributed_delay_copy.py &
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=1 python3 distributed_delay_copy.py
Across machines: the same command on every machine with MASTER_ADDR = the rank-0 machine's
address (reachable from all), a free MASTER_PORT, WORLD_SIZE = total processes and a distinct
RANK per process. (Debian bookworm's torchrun, torch 1.13 under Python 3.11, fails inside its
elastic agent before starting workers; the environment variables are all it would set.)

Ctrl-C (or SIGTERM) to any process (with --spawn: to the spawner, which passes it on) stops all
of them before the next step: the processes agree on it in an all-reduce, rank 0 writes the
model's and Adam's state after the last complete step to --state, and all exit with 130 (143);
`--resume STATE.pt` with the same options goes on to the same parameters as a run that never
stopped. A signal that comes after the last step's check finds training complete: the results
are written and the processes exit 0.
"""
import argparse
import json
import signal
import os
import pathlib
import socket
import subprocess
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import egret
import egret.torch as et

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=200, help="optimizer steps")
    ap.add_argument("--global-batch", type=int, default=16, help="trials per step, all processes")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--threads", type=int, default=1, help="TBB threads per process")
    ap.add_argument("--precision", choices=["float", "double"], default="float",
                    help="the scalar egret computes in (tensors are float64 in both)")
    ap.add_argument("--save", help="write the final parameters (rank 0) to this .npz file")
    ap.add_argument("--spawn", type=int, default=0,
                    help="start this many local processes (127.0.0.1) and wait for them")
    ap.add_argument("--log-every", type=int, default=50, help="a progress line every N steps")
    ap.add_argument("--state", default="out/distributed_delay_copy/training_state.pt",
                    help="where an interrupt saves the state (rank 0)")
    ap.add_argument("--resume", metavar="STATE.pt",
                    help="go on from the state an interrupt saved, with the same options")
    args = ap.parse_args(argv)
    if args.spawn > 0:
        return spawn(args.spawn, argv if argv is not None else sys.argv[1:], args)

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    if args.global_batch % world:
        raise SystemExit(f"--global-batch {args.global_batch} is not divisible by WORLD_SIZE {world}")
    share = args.global_batch // world

    cfg = json.loads((ROOT / "examples" / "delay_copy.json").read_text())
    task = cfg.pop("task")
    for section in ("training", "output"):
        cfg.pop(section)
    # Every process generates the same trials (same seed) and takes its share of each batch.
    trials = egret.delay_copy_trials(task["train_trials"], task["seed"], bits=task["bits"])
    test = egret.delay_copy_trials(task["test_trials"], task["seed"] + 1, bits=task["bits"])
    model = et.EventNetwork(cfg, threads=args.threads, precision=args.precision)
    ddp = DistributedDataParallel(model) if world > 1 else model
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    order = np.random.default_rng(1).permutation(len(trials))

    first_step = 0
    if args.resume:
        state = et.load_training_state(args.resume)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        first_step = state["step"]
        if rank == 0:
            print(f"resuming from {args.resume} after step {first_step}", flush=True)

    with et.InterruptibleTraining() as stop:
        for step in range(first_step, args.steps):
            # Every process learns of a signal any of them received, before the same step.
            signal_number = torch.tensor([stop.signal or 0])
            if world > 1:
                dist.all_reduce(signal_number, op=dist.ReduceOp.MAX)
            if signal_number.item():
                stop_cleanly(args, model, opt, step, rank, int(signal_number.item()))
            first = (step * args.global_batch) % len(trials)
            idx = order[np.arange(first, first + args.global_batch) % len(trials)]
            mine = [trials[i] for i in idx[rank * share:(rank + 1) * share]]
            target = torch.stack([torch.from_numpy(s.targets) for s in mine])
            loss = bce(ddp(mine), target)  # mean over this share; DDP averages over processes
            opt.zero_grad()
            loss.backward()
            opt.step()
            if rank == 0 and (step + 1) % args.log_every == 0:
                print(f"step {step + 1}/{args.steps}: loss {loss.item():.4f} (rank 0's share)",
                      flush=True)

        # Still inside: a signal after the last step's check is too late to stop before a step.
        # Training is complete, so the results are written as usual and said so.
        if rank == 0:
            report(args, model, test, world)
            if stop:
                print(f"{stop.name} after the last step: training had finished; results written",
                      flush=True)
        if world > 1:
            leave_group()
    # Nothing is left to interrupt: a late signal must not turn a finished run into a traceback.
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)


def resume_command(argv, args):
    return " ".join([sys.executable, *argv] + ([] if args.resume else ["--resume", args.state]))


def report(args, model, test, world):
    """Rank 0 at the end: the held-out accuracy, and the parameters to --save."""
    with torch.no_grad():
        logits = model(test)
        target = torch.stack([torch.from_numpy(s.targets) for s in test])
        acc = ((logits > 0) == (target > 0.5)).double().mean().item()
    print(f"{world} process(es), {args.steps} steps of {args.global_batch} trials: "
          f"held-out bitwise accuracy {100 * acc:.1f} %", flush=True)
    if args.save:
        state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
        np.savez(args.save + ".tmp.npz", **state)
        os.replace(args.save + ".tmp.npz", args.save)


def stop_cleanly(args, model, opt, step, rank, signal_number):
    """After an interrupt: rank 0 saves the state after `step` steps; every process leaves the
    group and exits with 128 + the signal."""
    if rank == 0:
        os.makedirs(os.path.dirname(os.path.abspath(args.state)), exist_ok=True)
        et.save_training_state(args.state, {"model": model.state_dict(),
                                            "optimizer": opt.state_dict(), "step": step})
        print(f"{signal.Signals(signal_number).name} before step {step + 1}: wrote {args.state} "
              f"after step {step}", flush=True)
        if "EGRET_SPAWNED" not in os.environ:  # else the spawner says it, with --spawn
            print(f"resume with: {resume_command(sys.argv, args)}", flush=True)
    if dist.is_initialized():
        leave_group()
    sys.exit(128 + signal_number)


def leave_group():
    """Every process waits for the others before leaving: a rank that destroys the group while
    another still works in it (rank 0 writing the state or the report) can hang the exit
    (pytorch/pytorch#75097), which a clean-clone CI run once met."""
    dist.barrier()
    dist.destroy_process_group()


def spawn(n, argv, args):
    """Runs this script in n processes on localhost (ranks 0..n-1); fails if any fails."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rest = [a for i, a in enumerate(argv)
            if a != "--spawn" and not a.startswith("--spawn=") and (i == 0 or argv[i - 1] != "--spawn")]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(n),
               EGRET_SPAWNED="1")
    # The workers get their own session, so that a Ctrl-C in the terminal reaches them once: from
    # here, passed on (a second copy would end them at once, InterruptibleTraining).
    procs = [subprocess.Popen([sys.executable, __file__, *rest], env=dict(env, RANK=str(r)),
                              start_new_session=True) for r in range(n)]

    def pass_on(signal_number, frame):
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal_number)
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, pass_on)
    # If one process fails, the others would wait in a collective: stop them.
    while any(p.poll() is None for p in procs):
        if any(p.poll() not in (None, 0, 130, 143) for p in procs):  # not an interrupt
            for p in procs:
                if p.poll() is None:
                    p.terminate()
            break
        time.sleep(0.1)
    codes = [p.wait() for p in procs]
    if codes and all(c == codes[0] and c in (130, 143) for c in codes):
        print(f"resume with: {resume_command([__file__, *argv], args)}", flush=True)
        raise SystemExit(codes[0])  # interrupted and saved: the workers' status
    if any(codes):
        raise SystemExit(f"distributed_delay_copy: process exit codes {codes}")


if __name__ == "__main__":
    main()
