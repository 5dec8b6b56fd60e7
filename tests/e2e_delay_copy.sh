#!/usr/bin/env bash
# End to end, as a user would run it: `egret train` on the delay-copy example, then the figure.
# Checks that the held-out accuracy reached 100 % and that the figure was written.
# Three independent parts (PART: held, finite or exp, default all), so that ctest can run them
# side by side: each trains for a minute or more under AddressSanitizer.
set -euo pipefail
egret="$1"
root="$2"
part="${3:-all}"
case "$part" in
  held | finite | exp | all) ;;
  *) echo "e2e_delay_copy.sh: unknown part '$part' (held, finite, exp or all)" >&2; exit 2 ;;
esac
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
if [[ "$part" == held || "$part" == all ]]; then
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
fi
if [[ "$part" == finite || "$part" == all ]]; then
# The paper's setting (issue 15 item 4): inputs held for 1 ms only, the memory in c and the
# events. Trained from a start that holds nothing (75 %), it must reach 100 % on fresh trials.
"$egret" train --config "$root/examples/delay_copy_finite_windows.json" --out "$out/finite" \
  > "$out/finite.txt"
tail -2 "$out/finite.txt"
grep -q "^epoch    0  held-out loss [0-9.]*  acc  75.0%" "$out/finite.txt"
grep -q "final held-out bitwise accuracy: 100.0%" "$out/finite.txt"
/usr/bin/python3 "$root/scripts/plot_delay_copy.py" "$out/finite"
test -s "$out/finite/delay_copy.png"
fi
if [[ "$part" == exp || "$part" == all ]]; then
# The exp gate kernel (issue 15 item 4): inputs held 1 ms and relaxing with tau_s = 10 ms.
"$egret" train --config "$root/examples/delay_copy_exp_kernel.json" --out "$out/exp" > "$out/exp.txt"
tail -2 "$out/exp.txt"
grep -q "^epoch    0  held-out loss [0-9.]*  acc  75.0%" "$out/exp.txt"
grep -q "final held-out bitwise accuracy: 100.0%" "$out/exp.txt"
fi
echo "e2e delay-copy ($part): ok"
