"""seqgrade batch against nbgrader autograde on one class size (steps 1-4 of benchmarks/grading.py): every
repetition of both tools, the table of rates and ratios, and the checks of the run."""

from __future__ import annotations

import statistics
from pathlib import Path

from nbgrader_runs import nbgrader_scores, run_nbgrader
from seqgrade_runs import compare_points, run_seqgrade, same_outputs, vars_of
from spread import med
from submissions import KINDS, make_submissions

TARGETS = {32: 20, 300: 30}  # seqgrade / nbgrader end to end, by class size (issue 38)


def compare_tools(n: int, args, work: Path, template: Path, runs: list[dict], problems: list[str]):
    """seqgrade batch against nbgrader on n byte-distinct notebooks (steps 1-4 of the docstring); returns
    (the end-to-end ratio, the notebooks by kind, the seqgrade runs of the whole set)."""
    (work / f"n{n}").mkdir()
    by_kind = make_submissions(n, args.seed, work / f"n{n}")
    everything = [p for k in KINDS for p in by_kind[k]]
    not_hostile = [p for k in KINDS if k != "hostile" for p in by_kind[k]]
    print(
        f"# {len(everything)} byte-distinct submissions ({', '.join(f'{len(v)} {k}' for k, v in by_kind.items())}; "
        f"seed {args.seed}), seqgrade --workers {args.workers}, {args.reps} repetitions",
        flush=True,
    )
    seq_outputs = []
    for rep in range(args.reps):
        tools = ("seqgrade", "nbgrader") if rep % 2 == 0 else ("nbgrader", "seqgrade")
        for tool in tools:
            if tool == "seqgrade":
                sets = (
                    (("all", everything),)
                    if args.whole_only
                    else (("all", everything), ("not_hostile", not_hostile), *by_kind.items())
                )
                for label, paths in sets:
                    m, out = run_seqgrade(
                        paths, work / f"n{n}-seq-{rep}-{label}", args.workers, sample_memory=label == "all"
                    )
                    runs.append(
                        {"size": n, "tool": "seqgrade", "rep": rep, "set": label, "n": len(paths), **vars_of(m)}
                    )
                    print(
                        f"rep {rep} seqgrade {label:12s} {len(paths):4d} notebooks: {m.wall_s:7.1f} s wall, "
                        f"{m.cpu_s:7.1f} CPU s ({m.cpu_source})",
                        flush=True,
                    )
                    if label == "all":
                        seq_outputs.append(out)
            elif args.whole_only:
                grade, feedback, course = run_nbgrader(everything, template, work / f"n{n}-nbg-{rep}-all")
                runs.append(
                    {
                        "size": n,
                        "tool": "nbgrader",
                        "rep": rep,
                        "set": "all",
                        "n": len(everything),
                        **{k: getattr(grade, k) + getattr(feedback, k) for k in ("wall_s", "cpu_s")},
                    }
                )
                print(
                    f"rep {rep} nbgrader {'all':12s} {len(everything):4d} notebooks: "
                    f"{grade.wall_s + feedback.wall_s:7.1f} s wall, "
                    f"{grade.cpu_s + feedback.cpu_s:7.1f} CPU s",
                    flush=True,
                )
                if rep == 0:
                    problems += compare_points(nbgrader_scores(course), seq_outputs, by_kind)
            else:
                grade, feedback, _ = run_nbgrader([], template, work / f"n{n}-nbg-{rep}-empty")
                runs.append(
                    {
                        "size": n,
                        "tool": "nbgrader",
                        "rep": rep,
                        "set": "empty",
                        "n": 0,
                        **{k: getattr(grade, k) + getattr(feedback, k) for k in ("wall_s", "cpu_s")},
                    }
                )
                print(
                    f"rep {rep} nbgrader {'no notebook':12s}    0 notebooks: "
                    f"{grade.wall_s + feedback.wall_s:7.1f} s wall, "
                    f"{grade.cpu_s + feedback.cpu_s:7.1f} CPU s (its start-up)",
                    flush=True,
                )
                for kind, paths in by_kind.items():
                    grade, feedback, course = run_nbgrader(paths, template, work / f"n{n}-nbg-{rep}-{kind}")
                    runs.append(
                        {
                            "size": n,
                            "tool": "nbgrader",
                            "rep": rep,
                            "set": kind,
                            "n": len(paths),
                            **{k: getattr(grade, k) + getattr(feedback, k) for k in ("wall_s", "cpu_s")},
                            "autograde_wall_s": grade.wall_s,
                            "feedback_wall_s": feedback.wall_s,
                            "returncode": grade.returncode or feedback.returncode,
                        }
                    )
                    print(
                        f"rep {rep} nbgrader {kind:12s} {len(paths):4d} notebooks: "
                        f"{grade.wall_s + feedback.wall_s:7.1f} s wall "
                        f"(autograde {grade.wall_s:.1f}, feedback {feedback.wall_s:.1f}), "
                        f"{grade.cpu_s + feedback.cpu_s:7.1f} CPU s",
                        flush=True,
                    )
                    if rep == 0:
                        problems += compare_points(nbgrader_scores(course), seq_outputs, {kind: paths})
    if len(seq_outputs) >= 2:
        differ = same_outputs(seq_outputs[0], seq_outputs[1])
        problems += [f"seqgrade runs 1 and 2 differ in {d}" for d in differ]

    def rows(tool, label):
        return [r for r in runs if r["tool"] == tool and r["set"] == label and r.get("size") == n]

    def nbg_total(kinds):  # nbgrader's figure for a set of kinds, per repetition: see the docstring
        per_rep = {}
        for r in runs:
            if r["tool"] == "nbgrader" and r["set"] in kinds and r.get("size") == n:
                t = per_rep.setdefault(r["rep"], [0, 0.0, 0.0])
                t[0] += r["n"]
                t[1] += r["wall_s"]
                t[2] += r["cpu_s"]
        for r in runs:
            if r["tool"] == "nbgrader" and r["set"] == "empty" and r.get("size") == n:
                t = per_rep[r["rep"]]
                t[1] -= (len(kinds) - 1) * r["wall_s"]
                t[2] -= (len(kinds) - 1) * r["cpu_s"]
        return list(per_rep.values())

    def line(name, seq_rows, nbg_rows):
        s_rate = [r["n"] / r["wall_s"] for r in seq_rows]
        n_rate = [n / w for n, w, _ in nbg_rows]
        s_cpu = [r["cpu_s"] / r["n"] for r in seq_rows]
        n_cpu = [c / n for n, _, c in nbg_rows]
        ratio = [a / b for a, b in zip(s_rate, n_rate)]
        cpu_ratio = [b / a for a, b in zip(s_cpu, n_cpu)]
        print(
            f"| {name} | {med(s_rate)} | {med(n_rate)} | **{statistics.median(ratio):.1f}x** "
            f"[{min(ratio):.1f}-{max(ratio):.1f}] | {statistics.median(ratio) / args.workers:.1f}x | "
            f"{med(s_cpu)} | {med(n_cpu)} | {statistics.median(cpu_ratio):.1f}x |"
        )
        return statistics.median(ratio)

    print("\n# medians over the repetitions [range]; notebooks per second of wall time, CPU seconds per notebook")
    print(
        "| set | seqgrade nb/s | nbgrader nb/s | ratio | ratio per core | seqgrade CPU s/nb | nbgrader CPU s/nb "
        "| CPU ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    if args.whole_only:
        overall = line(
            f"all {len(everything)}",
            rows("seqgrade", "all"),
            [(r["n"], r["wall_s"], r["cpu_s"]) for r in rows("nbgrader", "all")],
        )
    else:
        overall = line(f"all {len(everything)}", rows("seqgrade", "all"), nbg_total(KINDS))
    if not args.whole_only:
        line(
            f"without hostile ({len(not_hostile)})",
            rows("seqgrade", "not_hostile"),
            nbg_total(("correct", "partly_wrong", "invalid")),
        )
        for kind in KINDS:
            line(kind, rows("seqgrade", kind), nbg_total((kind,)))
    peak = max(r["peak_mb"] for r in rows("seqgrade", "all"))
    print(f"\nseqgrade / nbgrader end to end, all {len(everything)}: {overall:.1f}x (target >= {TARGETS.get(n, 10)}x)")
    print(f"peak memory of the whole batch (PSS): {peak:.0f} MB")
    print("\n# checks in this run", flush=True)
    said = list(problems) or [
        "seqgrade and nbgrader agree on every correct and partly wrong notebook's automatic points"
    ]
    if not problems:
        said.append(
            "seqgrade runs 1 and 2 wrote byte-identical results, feedback pages and grades.csv"
            if len(seq_outputs) >= 2
            else "one seqgrade run only: byte-identity not checked (--reps 2 or more)"
        )
    print("  " + "\n  ".join(said), flush=True)
    return overall, by_kind, rows("seqgrade", "all")
