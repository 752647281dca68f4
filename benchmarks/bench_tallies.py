"""What keeping a generator's tallies per case and per call costs when a run in chunks is stacked.

A streamed run of F factuals stacks its chunks' sets (``CounterfactualSet.concat``), and so their configs
(:func:`flex_core.counterfactuals._tally.stacked`): each chunk is one call whose config lists the row ids it made. This
times opening 10,000-row calls (a case in 50 flagged), stacking them, and cutting 20 rows out, for 100,000 and
1,000,000 rows, with the memory Python allocates for it (``tracemalloc``'s peak). Prints a Markdown table.

    python benchmarks/bench_tallies.py
"""

from __future__ import annotations

import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from flex_core.counterfactuals._tally import cut, opened, stacked

CALL_ROWS = 10_000  # the store's chunk (FLEX_CHUNK_ROWS)
CONFIG = {"tree": {"ran": "tree"}, "time_limit": None}


def measure(n_rows: int) -> dict:
    tracemalloc.start()
    start = time.perf_counter()
    parts = []
    for first in range(0, n_rows, CALL_ROWS):
        rows = np.arange(first, first + CALL_ROWS)
        parts.append((opened(CONFIG, rows, cases={"more_than_n_cf": rows[::50].tolist()},
                             tallies={"tree.pairs_read": 5}), rows))
    opened_s = time.perf_counter() - start
    start = time.perf_counter()
    whole = stacked(parts)
    stacked_s = time.perf_counter() - start
    start = time.perf_counter()
    cut(whole, np.arange(20))
    cut_s = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert whole["tree"]["pairs_read"] == 5 * len(parts) and len(whole["tree"]["more_than_n_cf"]) == n_rows // 50
    return {"rows": n_rows, "calls": len(parts), "open": opened_s, "stack": stacked_s, "cut": cut_s, "peak_mb": peak / 1e6}


def main() -> None:
    print(f"Python {platform.python_version()}, {platform.machine()}")
    print("| rows | calls | open the calls | stack them | cut 20 rows | traced peak |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n_rows in (100_000, 1_000_000):
        r = measure(n_rows)
        print(f"| {r['rows']:,} | {r['calls']} | {r['open']:.2f} s | {r['stack']:.2f} s | {r['cut']:.3f} s | {r['peak_mb']:.0f} MB |")


if __name__ == "__main__":
    main()
