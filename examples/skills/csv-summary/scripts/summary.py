#!/usr/bin/env python3
"""Summarise a CSV file as JSON: rows, columns, and min/max/mean of numeric columns.

Usage: summary.py FILE [--delimiter ,]
"""
import argparse
import csv
import json
import sys


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser(description="Summarise a CSV file as JSON.")
    parser.add_argument("file")
    parser.add_argument("--delimiter", default=",")
    args = parser.parse_args()
    with open(args.file, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f, delimiter=args.delimiter)
        columns = reader.fieldnames or []
        stats = {c: {"numeric": True, "min": None, "max": None, "sum": 0.0, "count": 0} for c in columns}
        rows = 0
        for row in reader:
            rows += 1
            for c in columns:
                s = stats[c]
                value = (row.get(c) or "").strip()
                if value == "" or not s["numeric"]:
                    continue
                n = number(value)
                if n is None:
                    s["numeric"] = False
                    continue
                s["min"] = n if s["min"] is None else min(s["min"], n)
                s["max"] = n if s["max"] is None else max(s["max"], n)
                s["sum"] += n
                s["count"] += 1
    numeric = {
        c: {"min": s["min"], "max": s["max"], "mean": round(s["sum"] / s["count"], 6)}
        for c, s in stats.items()
        if s["numeric"] and s["count"] > 0
    }
    json.dump({"file": args.file, "rows": rows, "columns": columns, "numeric": numeric}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
