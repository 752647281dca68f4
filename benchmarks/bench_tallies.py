"""What keeping a generator's tallies per case and per call costs when a run in chunks is stacked.

A streamed run of F factuals stacks its chunks' sets without their feature values (``CounterfactualSet.concat``), and
with them their configs: each chunk is one generator call whose config lists the row ids it made
(``config["calls"]``) and the cases it counted (``config["cases"]``; see docs/cluster.md). This stacks such sets of
10,000 rows (one case in 50 flagged as having more ways out than n_cf) and cuts 20 rows out
(``CounterfactualSet.subset``), for 100,000 and 1,000,000 rows, beside the same sets with no tallies in their config:
the difference is what the tallies cost. Memory is what Python allocates (``tracemalloc``'s peak) while the sets are
made and stacked. Prints a Markdown table.

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
import flex_core as fc

CALL_ROWS = 10_000  # the store's chunk (FLEX_CHUNK_ROWS)
N_CF = 10


def chunk(first: int, tallies: bool) -> fc.counterfactuals.CounterfactualSet:
    """A set of CALL_ROWS rows without feature values, as the streamed path holds each chunk."""
    rows = np.arange(first, first + CALL_ROWS)
    found = np.zeros((CALL_ROWS, N_CF), bool)
    found[:, :3] = True
    config: dict = {"tree": {"ran": "tree"}, "time_limit": None}
    if tallies:
        config["cases"] = {"more_than_n_cf": rows[::50].tolist()}
        config["calls"] = {f"call{first}": {"rows": rows.tolist(), "tree.pairs_read": 5}}
    return fc.counterfactuals.CounterfactualSet((), rows, np.zeros((CALL_ROWS, 0)), np.zeros((CALL_ROWS, N_CF, 0)), found,
                                                found.copy(), "tree", 0.0, 0, (), config)


def measure(n_rows: int, tallies: bool) -> dict:
    tracemalloc.start()
    sets = [chunk(first, tallies) for first in range(0, n_rows, CALL_ROWS)]
    start = time.perf_counter()
    whole = fc.counterfactuals.CounterfactualSet.concat(sets)
    stacked = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    start = time.perf_counter()
    whole.subset(np.arange(20))
    cut = time.perf_counter() - start
    if tallies:
        assert whole.config["tree"]["pairs_read"] == 5 * len(sets)
        assert len(whole.config["tree"]["more_than_n_cf"]) == n_rows // 50
    return {"stack": stacked, "cut": cut, "peak_mb": peak / 1e6}


def main() -> None:
    print(f"Python {platform.python_version()}, {platform.machine()}, flex_core {fc.__version__}")
    print("| rows | calls | stacked (no tallies) | cut 20 rows (no tallies) | traced peak (no tallies) |")
    print("|---:|---:|---:|---:|---:|")
    measure(2 * CALL_ROWS, True)  # warm-up: what the first call imports or caches is not the tallies' cost
    for n_rows in (100_000, 1_000_000):
        kept, none = measure(n_rows, True), measure(n_rows, False)
        print(f"| {n_rows:,} | {n_rows // CALL_ROWS} | {kept['stack']:.2f} s ({none['stack']:.2f} s) | "
              f"{kept['cut']:.3f} s ({none['cut']:.3f} s) | {kept['peak_mb']:.0f} MB ({none['peak_mb']:.0f} MB) |")


if __name__ == "__main__":
    main()
