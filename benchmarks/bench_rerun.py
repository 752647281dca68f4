"""Rerun time of the Thresholds page after a τ change, with the counterfactuals already stored.

Target: under 300 ms. Each repeat moves the global τ slider to a value not seen
before (so no cached result is reused, only the stored counterfactuals) and times
one full AppTest rerun of app.py + the Thresholds page (sidebar, recomputation of
FLEX at the new τ, the τ sweep and panels from cache, all figures built and
serialised). Browser rendering is not included.

    .venv/bin/python benchmarks/bench_rerun.py [--repeats 15] [--n-factuals 200] [--n-cf 10]

Paper datasets are included when found in FLEX_DATA_DIR (default ../shared/data).

``--large N`` (default 200,000; 0 skips it) adds a generated N-row CSV (the synthetic-regional
recipe of ``bench_parallel.py``) opened as an uploaded file: the first view then includes
reading and checking the CSV and training on all its rows, and the Regional page's first view
(the factual map, which shows a seeded sample with a note) is timed as well.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _datasets(data_dir: Path) -> list[tuple[str, dict]]:
    out = [("synthetic-regional", {"kind": "builtin", "name": "synthetic-regional"})]
    for name, kind, file in (("loan", "loan", "loan_approval_dataset.csv"), ("accidents", "accidents", "RTA_Dataset.csv")):
        if (data_dir / file).is_file():
            out.append((name, {"kind": kind, "path": str(data_dir / file)}))
    return out


def _large_csv(n_rows: int) -> dict:
    from benchmarks.bench_parallel import synthetic_task

    frame = synthetic_task(n_rows).frame
    data = frame.to_csv(index=False).encode()
    print(f"large CSV: {n_rows:,} rows, {len(data) / 1e6:.1f} MB", file=sys.stderr, flush=True)
    return {"kind": "csv", "data": data, "filename": f"synthetic-{n_rows // 1000}k.csv", "target": "severity",
            "undesirable": ["Severe"]}


SOURCE_LABELS = {"loan": "Loan approval (paper)", "accidents": "Road accidents (paper)", "csv": "CSV upload"}


def bench(source: dict, *, n_factuals: int, n_cf: int, repeats: int) -> dict:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=1800)
    at.session_state["dataset"] = source
    at.session_state["sb_n_factuals"] = n_factuals
    at.session_state["sb_n_cf"] = n_cf
    if source["kind"] != "builtin":
        at.session_state["sb_source"] = SOURCE_LABELS[source["kind"]]
    start = time.perf_counter()
    at.run()
    at.switch_page("app_pages/thresholds.py").run()
    first = time.perf_counter() - start
    assert not at.exception, at.exception
    times = []
    for i in range(repeats):
        at.slider(key="w_tau").set_value(round(0.12 + 0.05 * i, 2) % 1.0)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
    result: dict[str, float | str] = {"first_view_s": first, "median_ms": 1000 * statistics.median(times), "max_ms": 1000 * max(times)}
    if source["kind"] == "csv":
        start = time.perf_counter()
        at.switch_page("app_pages/regional.py").run()
        result["regional_first_s"] = time.perf_counter() - start
        assert not at.exception, at.exception
        result["map_note"] = next((sentence for c in at.caption for sentence in c.value.split(". ")
                                   if "seeded random sample" in sentence), "no sampling note shown")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--n-factuals", type=int, default=200)
    parser.add_argument("--n-cf", type=int, default=10)
    parser.add_argument("--large", type=int, default=200_000, help="rows of the generated CSV (0: leave it out)")
    args = parser.parse_args()
    os.environ.setdefault("FLEX_CACHE_DIR", tempfile.mkdtemp(prefix="flex_bench_"))
    data_dir = Path(os.environ.get("FLEX_DATA_DIR", REPO.parent / "shared" / "data"))
    import flex_core as fc

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"generator {fc.counterfactuals.DEFAULT_GENERATOR}, N_F={args.n_factuals}, N_cf={args.n_cf}, {args.repeats} τ changes")
    print("| dataset | first view (generate + train) | rerun after τ change, median | max |")
    print("|---|---|---|---|")
    datasets = _datasets(data_dir)
    if args.large:
        datasets.append((f"generated CSV, {args.large:,} rows", _large_csv(args.large)))
    large = []
    for name, source in datasets:
        r = bench(source, n_factuals=args.n_factuals, n_cf=args.n_cf, repeats=args.repeats)
        print(f"| {name} | {r['first_view_s']:.1f} s | {r['median_ms']:.0f} ms | {r['max_ms']:.0f} ms |", flush=True)
        if "regional_first_s" in r:
            large.append((name, r))
    for name, r in large:
        print(f"\n{name}: Regional page first view (factual map + region) {r['regional_first_s']:.1f} s; map note: {r['map_note']}")


if __name__ == "__main__":
    main()
