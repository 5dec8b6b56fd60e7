"""Every Markdown table in the repository renders: GitHub-flavoured Markdown only recognises a
table whose delimiter row has as many cells as its header, and drops the cells of a row beyond
the header's. docs/speed.md had 30 tables whose delimiter row had extra cells, shown as plain
text with pipes."""
import re
import subprocess

from conftest import ROOT

DELIMITER = re.compile(r"\|(\s*:?-+:?\s*\|)+")


def markdown_files():
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    return [ROOT / p for p in listed.stdout.split()]


def cell_count(line):
    # An escaped pipe is text; every other pipe separates cells (in code spans too, as in GFM).
    return len(line.strip().replace("\\|", "").strip("|").split("|"))


def table_faults(text):
    """(line number, problem) for each table whose rows do not all have the header's cells."""
    faults, lines, in_fence = [], text.split("\n"), False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence or i == 0 or not DELIMITER.fullmatch(line.strip()):
            continue
        header = cell_count(lines[i - 1])
        if cell_count(line) != header:
            faults.append((i + 1, f"delimiter has {cell_count(line)} cells, header {header}"))
        j = i + 1
        while j < len(lines) and lines[j].strip().startswith("|"):
            if cell_count(lines[j]) != header:
                faults.append((j + 1, f"row has {cell_count(lines[j])} cells, header {header}"))
            j += 1
    return faults


def test_the_checker_finds_a_delimiter_with_extra_cells_and_a_long_row():
    text = "| a | b |\n|---|---|---|\n| 1 | 2 |\n\n| a | b |\n|---|---|\n| 1 | 2 | 3 |\n| x \\| y | z |\n"
    assert table_faults(text) == [(2, "delimiter has 3 cells, header 2"), (7, "row has 3 cells, header 2")]


def test_every_markdown_table_renders():
    files = markdown_files()
    assert any(p.name == "speed.md" for p in files)
    faults = [f"{p.relative_to(ROOT)}:{n}: {what}" for p in files for n, what in table_faults(p.read_text())]
    assert faults == []
