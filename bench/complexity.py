"""The package's shape in radon's figures: the mean cyclomatic complexity per block (as
`radon cc -a`), the functions at 15 or more, and those over 60 lines.

    pip install radon && python bench/complexity.py [PATH ...] [-v]

`-v` lists each function at 15 or more, or over 60 lines. Radon's JSON lists each method
once at the top level (with its class), which is how a method is counted here.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys


def main(argv: list[str]) -> int:
    paths = [a for a in argv if not a.startswith("-")] or ["gitstate"]
    run = subprocess.run([sys.executable, "-m", "radon", "cc", "-j", *paths],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"radon did not run ({run.stderr.strip()[-200:]}): pip install radon",
              file=sys.stderr)
        return 2
    found = json.loads(run.stdout)
    blocks, functions = [], []
    for path, items in found.items():
        if isinstance(items, dict):      # a file radon could not read
            continue
        for item in items:
            blocks.append(item["complexity"])
            if item.get("type") in ("function", "method"):
                name = (item["classname"] + "." if item.get("classname") else "") + item["name"]
                functions.append((item["complexity"], path, name,
                                  item["endline"] - item["lineno"] + 1))
    print(f"blocks={len(blocks)} mean={statistics.mean(blocks):.2f}  "
          f"functions={len(functions)} >=15: {sum(1 for f in functions if f[0] >= 15)}  "
          f"over 60 lines: {sum(1 for f in functions if f[3] > 60)}")
    if "-v" in argv:
        for cc, path, name, lines in sorted(functions, reverse=True):
            if cc >= 15 or lines > 60:
                print(f"  cc={cc} {path} {name} ({lines} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
