#!/usr/bin/python3
"""Measures how long a command stays silent: copies stdin to stdout with each line prefixed by
the seconds since the start, then prints the longest gap between two lines (or from the start to
the first) and the line that ended it.

usage: bash scripts/run.sh 2>&1 | /usr/bin/python3 scripts/silence.py [--until REGEX]
  --until REGEX: measure up to the first line that matches (e.g. '^epoch' for "until the first
  epoch"), and keep copying the rest without measuring.

A measurement to report, not a test: wall times depend on the machine.
"""
import argparse
import re
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--until", help="stop measuring at the first line that matches this")
    args = ap.parse_args()
    start = last = time.monotonic()
    longest, ended_by, measuring = 0.0, "", True
    for line in sys.stdin:
        now = time.monotonic()
        if measuring and now - last > longest:
            longest, ended_by = now - last, line.rstrip("\n")
        sys.stdout.write(f"[{now - start:7.1f} s] {line}")
        sys.stdout.flush()
        last = now
        if measuring and args.until and re.search(args.until, line):
            measuring = False
            print(f"silence: reached /{args.until}/ after {now - start:.1f} s")
    print(f"silence: longest gap {longest:.1f} s, ended by: {ended_by}")


if __name__ == "__main__":
    main()
