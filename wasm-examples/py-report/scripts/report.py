#!/usr/bin/env python3
"""Summarise a CSV file of the workspace into report.md.

Usage: report.py FILE

FILE is read from the workspace ($HOME under packs) when it is relative.
Prints one JSON object on stdout; errors go to stderr with exit status 1.
"""
import csv
import json
import os
import sys


def numeric(values):
    out = []
    for v in values:
        try:
            out.append(float(v))
        except ValueError:
            return None
    return out


def main(argv):
    if len(argv) != 2:
        print("usage: report.py FILE", file=sys.stderr)
        return 2
    workspace = os.environ.get("HOME", ".")
    path = argv[1] if os.path.isabs(argv[1]) else os.path.join(workspace, argv[1])
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        print(f"report.py: cannot read {argv[1]}: {e.strerror}", file=sys.stderr)
        return 1
    columns = list(rows[0].keys()) if rows else []
    lines = [f"# Report on {os.path.basename(path)}", "", f"{len(rows)} rows.", ""]
    stats = {}
    for col in columns:
        nums = numeric([r[col] for r in rows])
        if nums:
            stats[col] = {"total": sum(nums), "mean": sum(nums) / len(nums), "min": min(nums), "max": max(nums)}
    if stats:
        lines += ["| column | total | mean | min | max |", "|---|---|---|---|---|"]
        for col, s in stats.items():
            lines.append(f"| {col} | {s['total']:g} | {s['mean']:g} | {s['min']:g} | {s['max']:g} |")
    report = os.path.join(workspace, "report.md")
    with open(report, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(json.dumps({"rows": len(rows), "columns": columns, "numeric": stats, "report": "report.md"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
