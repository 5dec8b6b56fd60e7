#!/usr/bin/env bash
# End to end, as a user would run it: `egret train` on the delay-copy example, then the figure.
# Checks that the held-out accuracy reached 100 % and that the figure was written.
set -euo pipefail
egret="$1"
root="$2"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$egret" train --config "$root/examples/delay_copy.json" --out "$out" > "$out/train.txt"
cat "$out/train.txt" | tail -4
grep -q "final held-out bitwise accuracy: 100.0%" "$out/train.txt"
for f in checkpoint.h5 training_log.csv figure_states.csv figure_events.csv figure_inputs.csv \
         figure_trials.csv; do
  test -s "$out/$f" || { echo "missing $f"; exit 1; }
done
/usr/bin/python3 "$root/scripts/plot_delay_copy.py" "$out"
test -s "$out/delay_copy.png"
# Resuming from the final checkpoint with more epochs continues from there.
last=$(tail -n 1 "$out/training_log.csv" | cut -d, -f1)
"$egret" train --resume "$out/checkpoint.h5" --out "$out/resumed" --epochs $((last + 3)) \
  > "$out/resume.txt"
grep -q "^epoch *$((last + 1)) " "$out/resume.txt"
grep -q "final held-out bitwise accuracy" "$out/resume.txt"
echo "e2e delay-copy: ok"
