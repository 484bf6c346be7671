"""The SDK-object table from a pytest-benchmark JSON file: median per way of passing a reply, the
ratio of an SDK object to the same reply as a dict, and what dumping the object first costs.

    python -m pytest benches/bench_sdk_objects.py -k speed --benchmark-only --benchmark-json=sdk.json
    python benches/sdk_report.py sdk.json
"""

from __future__ import annotations

import json
import sys


def main(path: str) -> None:
    medians: dict[str, dict[str, float]] = {}
    for run in json.load(open(path))["benchmarks"]:
        medians.setdefault(run["group"], {})[run["params"]["way"]] = run["stats"]["median"]
    print("| reply | object | dict | model_dump + dict | object / dict | dump / object |")
    print("|---|---:|---:|---:|---:|---:|")
    for group, way in medians.items():
        obj, plain, dumped = way["toolmend(object)"], way["toolmend(dict)"], way["model_dump+toolmend"]
        print(f"| {group} | {obj * 1e6:.2f} µs | {plain * 1e6:.2f} µs | {dumped * 1e6:.2f} µs | {obj / plain:.2f}x | {dumped / obj:.1f}x |")


if __name__ == "__main__":
    main(sys.argv[1])
