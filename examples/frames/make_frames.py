"""Writes the example frames for `egret emulate` (README tour): 16 grey 128x128 PNG frames, 25 ms
apart, of a bright disc swinging left to right over a dim shaded background, and their list
images.txt ('<seconds> <path>' lines, the Event Camera Dataset's layout). Deterministic: the
committed files are this script's output (/usr/bin/python3 examples/frames/make_frames.py)."""
import math
import pathlib
import struct
import zlib

SIZE = 128
FRAMES = 16
STEP_S = 0.025


def png_gray(path, rows):
    """An 8-bit greyscale PNG (no filter, zlib level 9)."""
    raw = b"".join(b"\x00" + bytes(row) for row in rows)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", len(rows[0]), len(rows), 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def frame(k):
    """The disc's centre swings along an arc; the background is a left-to-right shade."""
    phase = k / (FRAMES - 1)
    cx = 24 + 80 * phase
    cy = 64 - 24 * math.sin(math.pi * phase)
    rows = []
    for y in range(SIZE):
        row = []
        for x in range(SIZE):
            inside = (x - cx) ** 2 + (y - cy) ** 2 <= 14 ** 2
            row.append(230 if inside else 40 + x // 4)
        rows.append(row)
    return rows


def main():
    here = pathlib.Path(__file__).resolve().parent
    (here / "images").mkdir(exist_ok=True)
    lines = []
    for k in range(FRAMES):
        name = f"images/frame_{k:02d}.png"
        png_gray(here / name, frame(k))
        lines.append(f"{k * STEP_S:.3f} {name}")
    (here / "images.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
