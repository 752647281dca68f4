"""Constraints between features: the default generator's speed with loan's shipped rules against without (issue 36).

Workload: loan (FLEX_DATA_DIR), the project's random forest (seed 0), the same 200 factuals (seed 0), n_cf = 10;
the rules of ``examples/constraints/loan.txt``. Each generator runs ``--repeats`` times with and without the
rules, alternating, every run cold (a fresh copy of the model); the median counts. Also reported: counterfactuals
that break a rule (must be 0) and valid counterfactuals per factual.

``--violations`` instead runs every generator once with the rules on the same 200 factuals × 10 (seed 0) and
re-checks each returned counterfactual against every rule twice, independently of the generators' own filter:
with each parsed rule alone (``TaskSpec.rule_breaks``) and with the rules restated by hand in pandas on the
decoded rows (``LOAN_RULES``), so a fault in the parser or the evaluator would show too. The counts go to
``benchmarks/results/constraints.md`` (``--out``); every count must be 0.

    FLEX_DATA_DIR=../shared/data python benchmarks/bench_constraints.py [--repeats 3] [--generators tree,batch]
    FLEX_DATA_DIR=../shared/data python benchmarks/bench_constraints.py --violations
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.bench_generators import load, machine
from flex_core.data.rules import constraints_from_lines

REPO = Path(__file__).resolve().parents[1]
RULES_FILE = REPO / "examples" / "constraints" / "loan.txt"
EVERY_GENERATOR = ("tree", "batch", "batch-plausible", "dice-random", "dice-genetic", "dice-kdtree")

#: The rules of ``examples/constraints/loan.txt`` restated by hand on decoded rows (cf: counterfactuals, x: their
#: factuals): which rows hold each. A check apart from ``flex_core.data.rules``; the file must say the same.
LOAN_RULES = {
    "cf.loan_amount <= 4 * cf.income_annum": lambda cf, x: cf["loan_amount"] <= 4 * cf["income_annum"],
    "if cf.loan_amount > x.loan_amount then cf.loan_term >= x.loan_term":
        lambda cf, x: (cf["loan_amount"] <= x["loan_amount"]) | (cf["loan_term"] >= x["loan_term"]),
    "cf.income_annum <= 1.5 * x.income_annum": lambda cf, x: cf["income_annum"] <= 1.5 * x["income_annum"],
}


def returned(cfset) -> tuple[np.ndarray, np.ndarray]:
    """A set's returned counterfactuals (every found slot, valid or not) and each one's factual, coded."""
    factuals = np.repeat(cfset.factuals, cfset.n_cf, axis=0)[cfset.found.reshape(-1)]
    return cfset.counterfactuals[cfset.found], factuals


def violations(task, cfs: np.ndarray, factuals: np.ndarray) -> dict:
    """Coded counterfactuals (n, F) breaking each rule given their factuals (n, F), counted twice: by the parsed
    rule and by ``LOAN_RULES``.

    ``parsed``/``by_hand``: per rule text, how many break it; ``library``: how many the library's one check
    (``constraint_violations``: per-feature constraints and the rules) refuses; ``any``: how many break anything by
    any of the three.
    """
    parsed = task.rule_breaks(cfs, factuals)
    cf_rows, x_rows = fc.counterfactuals.decode_rows(task, cfs), fc.counterfactuals.decode_rows(task, factuals)
    by_hand = np.column_stack([~np.asarray(LOAN_RULES[t](cf_rows, x_rows), dtype=bool) for t in task.rule_texts])
    library = fc.counterfactuals.constraint_violations(task, factuals, cfs)
    return {"parsed": dict(zip(task.rule_texts, parsed.sum(axis=0).tolist())),
            "by_hand": dict(zip(task.rule_texts, by_hand.sum(axis=0).tolist())),
            "library": int(library.sum()),
            "any": int((parsed.any(axis=1) | by_hand.any(axis=1) | library).sum())}


def loan_with_rules() -> tuple[fc.TaskSpec, fc.TaskSpec]:
    """Loan without and with the shipped rules; the hand restatement must match the file."""
    free = load("loan")
    texts = constraints_from_lines(RULES_FILE.read_text())
    if texts != list(LOAN_RULES):
        raise SystemExit(f"{RULES_FILE} no longer says what LOAN_RULES restates: {texts}")
    return free, free.with_overrides(constraints=texts)


def run(generator: str, model, tasks, rows, repeats: int) -> list[dict]:
    """Per task of ``tasks``: median seconds over ``repeats`` cold runs, taken in turn (task 1, task 2, task 1, ...)
    so a drift in the machine's load hits each alike; counterfactuals breaking a constraint; valid per factual."""
    times: list[list[float]] = [[] for _ in tasks]
    results = [None] * len(tasks)
    for _ in range(repeats):
        for k, task in enumerate(tasks):
            queries = task.frame.loc[rows, task.feature_names]
            start = time.perf_counter()
            results[k] = fc.counterfactuals.make_generator(generator).generate(dataclasses.replace(model), task,
                                                                               queries, n_cf=10)
            times[k].append(time.perf_counter() - start)
    out: list[dict] = []
    for task, result, runs in zip(tasks, results, times):
        assert result is not None
        cfs, factuals = returned(result)
        out.append({"seconds": statistics.median(runs), "runs": runs,
                    "broken": int(fc.counterfactuals.constraint_violations(task, factuals, cfs).sum()),
                    "per_factual": float(result.valid.sum() / len(rows))})
    return out


def violation_rows(model, task, rows) -> list[str]:
    """One table row per generator of :data:`EVERY_GENERATOR`: 200 × 10 with the rules, seed 0, re-checked."""
    queries = task.frame.loc[rows, task.feature_names]
    lines = []
    for name in EVERY_GENERATOR:
        start = time.perf_counter()
        cfset = fc.counterfactuals.make_generator(name).generate(dataclasses.replace(model), task, queries,
                                                                 n_cf=10, seed=0)
        seconds = time.perf_counter() - start
        counts = violations(task, *returned(cfset))
        report = cfset.config["constraints_between"]["constraints"]
        cells = [name, f"{len(rows)}", f"{int(cfset.found.any(axis=1).sum())}", f"{int(cfset.found.sum())}",
                 f"{int(cfset.valid.sum())}", *(f"{counts['parsed'][t]} / {counts['by_hand'][t]}" for t in LOAN_RULES),
                 f"{counts['library']}", f"**{counts['any']}**",
                 f"{sum(r['rejected_while_searching'] for r in report)} / {sum(r['dropped_from_output'] for r in report)}",
                 f"{seconds:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    return lines


def violations_report(out: Path) -> None:
    """Run :func:`violation_rows` on loan and write the table to ``out``."""
    free, ruled = loan_with_rules()
    model = fc.fit_model(free, model="rf", seed=0, cv_folds=0)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(free, model), 200, seed=0)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = [
        "# Loan with the shipped constraints between features: violations per generator (issue 36)", "",
        f"Machine: {machine()}. Run {when} (`FLEX_DATA_DIR=../shared/data python benchmarks/bench_constraints.py "
        f"--violations`), the only job of its session on a machine shared with other work (load average "
        f"{os.getloadavg()[0]:.1f} at the start), so the seconds are indicative; the counts do not depend on load.", "",
        f"Loan, the random forest (seed 0), 200 factuals (seed 0), n_cf = 10, seed 0, with the {len(LOAN_RULES)} rules of "
        "`examples/constraints/loan.txt` (columns 1-3 in its order). With a counterfactual: factuals with at least one returned. Every returned "
        "counterfactual (every found "
        "slot, valid or not) is re-checked against each rule twice: parsed rule / the rule restated by hand in pandas on "
        "the decoded rows (`LOAN_RULES`). Library: refused by `fc.counterfactuals.constraint_violations`, the one "
        "check of per-feature constraints and rules. Any: refused by any of the three; must be 0. Rejected / dropped: what the generator's own check rejected while "
        "searching / dropped from its output.", "",
        "| generator | factuals | with a counterfactual | returned | valid | rule 1 | rule 2 | rule 3 | library | "
        "any | rejected / dropped | seconds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    print("\n".join(head), flush=True)
    lines = violation_rows(model, ruled, rows)
    rules = [f"{k}. `{t}`" for k, t in enumerate(LOAN_RULES, 1)]
    out.write_text("\n".join([*head, *lines, "", "Rules:", "", *rules, ""]))
    print(f"\nwritten to {out}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--generators", default="tree,batch")
    parser.add_argument("--violations", action="store_true",
                        help="every generator once at 200 × 10 with the rules, violations re-checked per rule")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "constraints.md")
    args = parser.parse_args(argv)
    if args.violations:
        violations_report(args.out)
        return 0
    free, ruled = loan_with_rules()
    model = fc.fit_model(free, model="rf", seed=0, cv_folds=0)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(free, model), 200, seed=0)
    print(f"{machine()}\n")
    print("| generator | without rules s | with rules s | ratio | breakers | valid per factual (without / with) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.generators.split(","):
        without, with_rules = run(name, model, (free, ruled), rows, args.repeats)
        print(f"| {name} | {without['seconds']:.3f} | {with_rules['seconds']:.3f} | "
              f"{with_rules['seconds'] / without['seconds']:.2f}× | {with_rules['broken']} | "
              f"{without['per_factual']:.2f} / {with_rules['per_factual']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
