#!/usr/bin/python3
"""The README's five-minute tour as a test: runs every command of the tour exactly as written.

The commands are read from README.md itself (the ```sh and ```python blocks of the section
"A five-minute tour", in order), so the test cannot drift from the text. They run in a fresh
temporary folder that holds the repository's files as a clean clone has them (tracked and
not ignored; no out/, no ../shared beside it) and build/ (a link to the build), with bash
(set -euo pipefail; a block's commands share its shell variables) or, for ```python blocks,
PYTHONPATH=build/python /usr/bin/python3. Any non-zero exit fails the tour, and so does a step
whose promised files or printed figures (CHECKS below) are missing.

--quick (CI, about a minute): the long steps in a small variant, by the substitutions in QUICK
(the main job on 2 + 1 users for one epoch, and what follows from that). Every substitution and
every check must match a command of the README, or the tour fails: they cannot go stale.

usage: /usr/bin/python3 scripts/tour.py [--quick] [--build DIR] [--keep]
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SECTION = "## A five-minute tour"
QUICK_SET = "v2_users2+1_lightings2_seed1"

# (pattern of a README command, its replacement in --quick mode)
QUICK = [
    (r"^build/egret(?=\s*(#|$))", "build/egret --users 2,1 --seeds 3 --models egret --epochs 1"),
    (r"v2_users23\+6_lightings2_seed1", QUICK_SET),
    (r"(examples/delay_copy_exp_kernel\.json)", r"\1 --epochs 4"),
    (r"(examples/python/dvs_gesture\.py)",
     rf"\1 --dataset out/dvs_gesture_synthetic/{QUICK_SET} --epochs 1 --units 16"),
]

# (pattern of a README command, files it promises, patterns its output must hold)
CHECKS = [
    (r"^build/egret emulate ", ["events.aedat"],
     [r"\d+ events \(ON share 0\.\d+\) from 128x128 frames written to events\.aedat"]),
    (r"^build/egret inspect events\.aedat", [],
     [r"events\.aedat: aedat31 event-camera recording, 128x128 sensor, [1-9]\d* events"]),
    (r"^build/egret(?=\s*(#|$))",
     [f"out/dvs_gesture/{f}" for f in ("checkpoint.h5", "trace.h5", "training_log.csv",
                                       "results.json", "table1.csv")],
     [r"The EGRU paper's Table 1", r"egret, seed 3: held-out accuracy [\d.]+%"]),
    (r"^set=", [], []),
    (r"^build/egret classify ", [], [r"accuracy: [\d.]+% \(\d+ of 11 labelled windows\)"]),
    (r"^build/egret simulate --checkpoint \S+ --input events\.aedat", [],
     [r"recording: events\.aedat \(aedat31, 128x128 sensor\)", r"readout at 1500 ms: .*logits"]),
    (r"^build/egret simulate --config ", ["trace.h5"],
     [r"trace: [1-9]\d* events written to trace\.h5", r"activ\.sparse"]),
    (r"^build/egret inspect trace\.h5", [], [r"trace\.h5: egret trace, 2 layer", r"Eff\. MACs"]),
    (r"^build/egret estimate trace\.h5 ", ["estimate.json"],
     [r"per sample: energy [\d.]+ \S*J", r"added /egret/estimates/loihi_davies2018 to trace\.h5"]),
    (r"^build/egret train --config examples/delay_copy\.json", ["out/delay_copy/checkpoint.h5"],
     [r"final held-out bitwise accuracy: 100\.0%"]),
    (r"^build/egret train --config examples/delay_copy_discrete\.json",
     ["out/delay_copy_discrete/checkpoint.h5"], [r"final held-out bitwise accuracy: 100\.0%"]),
    (r"scripts/plot_delay_copy\.py out/delay_copy", ["out/delay_copy/delay_copy.png"], []),
    (r"^build/egret train --resume out/delay_copy/checkpoint\.h5", [],
     [r"final held-out bitwise accuracy: 100\.0%"]),
    (r"^build/egret train --config examples/delay_copy_finite_windows\.json",
     ["out/delay_copy_finite_windows/checkpoint.h5"],
     [r"final held-out bitwise accuracy: 100\.0%"]),
    (r"^build/egret train --config examples/delay_copy_exp_kernel\.json",
     ["out/delay_copy_exp_kernel/checkpoint.h5"], [r"final held-out bitwise accuracy: 100\.0%"]),
    (r"^build/egret train --config examples/delay_copy_lif\.json",
     ["out/delay_copy_lif/checkpoint.h5"], [r"final held-out bitwise accuracy: [\d.]+%"]),
    (r"^build/egret export-nir ", ["lif.nir"], [r"wrote lif\.nir \(NIR graph of "]),
    (r"^build/egret import-nir ", ["lif.json"], [r"wrote lif\.json \(the network of lif\.nir\)"]),
    (r"^import egret", [], []),  # the Python blocks print nothing; their exit status counts
    (r"examples/python/delay_copy\.py",
     [f"out/python_delay_copy/{f}" for f in ("checkpoint.h5", "trace.h5", "delay_copy.png")],
     [r"held-out accuracy 100\.0 %"]),
    (r"examples/python/dvs_gesture\.py",
     [f"out/python_dvs_gesture/{f}" for f in ("checkpoint.h5", "trace.h5", "dvs_gesture.png")],
     [r"held-out accuracy [\d.]+ %"]),
]

MARK = "\x1etour-step "


class TourError(Exception):
    pass


def tour_blocks(readme):
    """The tour's fenced ```sh / ```python blocks, in order: (language, [commands]). A command is
    a logical line (backslash continuations joined, as bash reads them); a Python block is one
    command."""
    text = readme.split(SECTION, 1)[1]
    text = re.split(r"^## ", text, maxsplit=1, flags=re.M)[0]
    blocks = []
    for language, body in re.findall(r"^```(\w+)\n(.*?)^```", text, flags=re.M | re.S):
        if language == "python":
            blocks.append((language, [body]))
        elif language == "sh":
            commands, current = [], ""
            for line in body.splitlines():
                current += line + "\n"
                if not line.endswith("\\"):
                    if current.strip():
                        commands.append(current.rstrip("\n"))
                    current = ""
            blocks.append((language, commands))
    if not blocks:
        raise TourError(f"README.md: no ```sh or ```python block under '{SECTION}'")
    return blocks


def substituted(command, quick, used):
    if not quick:
        return command
    for i, (pattern, replacement) in enumerate(QUICK):
        new = re.sub(pattern, replacement, command, flags=re.M)
        if new != command:
            used.add(i)
            command = new
    return command


def check_of(command):
    for i, (pattern, _, _) in enumerate(CHECKS):
        if re.search(pattern, command, flags=re.M):
            return i
    raise TourError(f"no check for the README command:\n  {command}\n"
                    "add what it promises to CHECKS in scripts/tour.py")


def clean_clone_layout(folder):
    """The files a clean clone has (tracked, or new and not ignored), as in the work tree."""
    try:
        names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], check=True, capture_output=True,
                               text=True).stdout.split("\0")
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: all but the outputs
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                 and p.relative_to(ROOT).parts[0] not in (".git", "out")
                 and not p.relative_to(ROOT).parts[0].startswith("build")]
    for name in filter(None, names):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)


def run_block(language, commands, shown, folder):
    """Runs a block's commands (`shown` is how each is printed); returns the output of each
    command that started (the last one is the failing one's when it failed) and the exit
    status."""
    if language == "python":
        argv, script = ["/usr/bin/python3", "-"], commands[0]
        env = dict(os.environ, PYTHONPATH="build/python")
        print(f"tour$ PYTHONPATH=build/python /usr/bin/python3 <<'EOF'\n{shown[0]}EOF", flush=True)
    else:
        argv, env = ["bash", "-s"], dict(os.environ)
        script = "set -euo pipefail\n" + "".join(
            f"printf '{MARK}%d\\n' {i}\n{c}\n" for i, c in enumerate(commands))
    process = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    process.stdin.write(script.encode())
    process.stdin.close()
    outputs = [""]  # bash's own messages before the first command go to the first
    for raw in process.stdout:
        # A progress bar (tqdm) redraws its line with \r: only its last state is kept.
        line = raw.decode(errors="replace").rstrip("\n").rstrip("\r").split("\r")[-1] + "\n"
        if line.startswith(MARK):
            i = int(line[len(MARK):])
            if i > 0:
                outputs.append("")
            print(f"tour$ {shown[i]}", flush=True)
            if commands[i] != shown[i]:
                print(f"      (--quick: {commands[i]})", flush=True)
            continue
        outputs[-1] += line
        sys.stdout.write(line)
        sys.stdout.flush()
    return outputs, process.wait()


def check_step(command, output, folder):
    _, files, patterns = CHECKS[check_of(command)]
    missing = [f for f in files if not (folder / f).is_file() or (folder / f).stat().st_size == 0]
    absent = [p for p in patterns if not re.search(p, output)]
    if missing or absent:
        raise TourError(f"the step\n  {command}\n"
                        + "".join(f"did not write {f}\n" for f in missing)
                        + "".join(f"did not print /{p}/\n" for p in absent))


def run_tour(quick, build, keep):
    for needed in ("egret", "python/egret"):
        if not (build / needed).exists():
            raise TourError(f"{build / needed} is missing: build first (bash scripts/build.sh)")
    blocks = tour_blocks((ROOT / "README.md").read_text())
    used = set()
    runs = [[substituted(c, quick, used) for c in commands] for _, commands in blocks]
    if quick and len(used) < len(QUICK):
        unused = [QUICK[i][0] for i in range(len(QUICK)) if i not in used]
        raise TourError(f"--quick substitutions that match no README command: {unused}")
    checked = {check_of(c) for _, commands in blocks for c in commands}  # each has a check
    if len(checked) < len(CHECKS):
        unused = [CHECKS[i][0] for i in range(len(CHECKS)) if i not in checked]
        raise TourError(f"checks that match no README command: {unused}")
    folder = pathlib.Path(tempfile.mkdtemp(prefix="egret-tour-"))
    try:
        clean_clone_layout(folder)
        (folder / "build").symlink_to(build.resolve())
        print(f"tour: the {sum(len(c) for _, c in blocks)} commands of README.md's tour in "
              f"{folder}" + (" (--quick)" if quick else ""), flush=True)
        t0 = time.monotonic()
        for (language, shown), commands in zip(blocks, runs):
            outputs, status = run_block(language, commands, shown, folder)
            if status != 0:
                raise TourError(f"exit status {status} from\n  {shown[len(outputs) - 1]}")
            for command, output in zip(shown, outputs):
                check_step(command, output, folder)
        print(f"tour: passed, {time.monotonic() - t0:.0f} s", flush=True)
    finally:
        if keep:
            print(f"tour: kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the small variants of the long steps")
    ap.add_argument("--build", type=pathlib.Path, default=ROOT / "build",
                    help="the build folder (default: build/)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    try:
        run_tour(args.quick, args.build, args.keep)
    except TourError as e:
        sys.exit(f"tour: FAILED: {e}")


if __name__ == "__main__":
    main()
