"""Placement advice from the profiling study's tables (studies/profiling/: predict, validate, advise).

  python -m interference.steps.placement advise --services L S NR --cores 2 --memory 4g [--model cpu-shares]
  python -m interference.steps.placement validate [--replicate OTHER/results/stats]
  python -m interference.steps.placement validate --model cpu-shares [--profiles DIR] [--replicate ...]
  python -m interference.steps.placement check --services L S NS --cores 2 --memory 4g

`advise` ranks every placement of the services on a host of CORES cores and MEMORY memory by
predicted total slowdown (each microservice's first declared metric unless --metric ID=NAME),
with the pair study's measurement beside it where one exists, prints the table and writes
results/stats/placement/advice-<services>.tsv. `validate` predicts every unit the pair study
measured (pairs and triples, Cases 2, 3a, 3b and 2-3a) whose microservices the profiles cover,
and compares them with the pair study's interference.tsv:
validation.tsv, validation_summary.tsv, failures.tsv and validation.png (predicted against
measured, both intervals) in results/stats/placement/. `check` advises, then compares the
recommended and the worst-ranked of the measured placements run by run (advice_check.py:
results/stats/placement/advice-check-<services>.tsv). `--model cpu-shares` validates the CPU-share
model (studies/profiling/cpu_shares.py, from the quota sweep's cpu_speed.tsv under --profiles,
default --stats) instead of the bubble model, into validation-cpu-shares*.tsv; `--model
cpu-shares+pinned` adds to its CPU part the rest from bubbles on the other core (pinned.py: the
profiling study's placement 3b), into validation-cpu-shares-pinned*.tsv; `--model cpu-busy` is the
CPU-share model reading a member's speed at its share from the busy sweep (unlimited beside
spinning containers) instead of the quota sweep, into validation-cpu-busy*.tsv. All read
the tables of one host and runtime (default: this host, docker); a missing table is named."""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from interference.core.microservices import registry
from interference.core.yaml_files import load_once
from interference.steps import config as config_step
from interference.studies.profiling import (
    advice_check,
    advice_score,
    cpu_correction,
    cpu_shares,
    pinned,
    pooled_speed,
)
from interference.studies.profiling.advise import advise, cpu_total, placements
from interference.studies.profiling.predict import predict_units
from interference.studies.profiling.profiles import Profiles
from interference.studies.profiling.validate import concurrent_rows, figure, validate, validation_rows

PROFILE_TABLES = ("sensitivity", "pressure", "limit_effect")
# The CPU-share models and the sweep each reads a member's speed at a share from: the quota
# sweep (the CPU part alone, and with the rest from pinned bubbles) or the busy sweep.
PINNED = "cpu-shares+pinned"
SWEEP_OF = {"cpu-shares": "1q", "cpu-busy": "1k", PINNED: "1q"}
CPU_MODELS = tuple(SWEEP_OF)
SHARE_MODELS = ("cpu-shares", "cpu-busy")  # the CPU part alone
SIZE = re.compile(r"^\s*([0-9.]+)\s*([kmg]?)b?\s*$", re.IGNORECASE)


class PlacementError(ValueError):
    """A missing table or a bad argument; the message says which."""


def bytes_of(text: str) -> float:
    """'4g' -> 4 GiB in bytes (k, m, g: powers of 1024, as Docker reads limits)."""
    m = SIZE.match(str(text))
    if not m:
        raise PlacementError(f"{text!r} is not a size such as 512m or 4g")
    return float(m[1]) * 1024 ** " kmg".index(m[2].lower() or " ")


def one_host(table: pd.DataFrame, host: str, runtime: str, path: Path) -> pd.DataFrame:
    rows = table[(table["host"] == host) & (table["runtime"] == runtime)] if "host" in table else table
    if rows.empty:
        raise PlacementError(f"{path} has no rows of host {host!r} and runtime {runtime!r}")
    return rows.drop(columns=[c for c in ("host", "runtime") if c in rows])


def profiles_of(stats: Path, host: str, runtime: str) -> Profiles:
    tables = []
    for name in PROFILE_TABLES:
        path = stats / "profiling" / f"{name}.tsv"
        if not path.exists():
            raise PlacementError(f"{path} is missing: run the profiling study first (config/profiling.yaml)")
        text = {
            "host": str,
            "runtime": str,
            "microservice": str,
            "placement": str,
            "resource": str,
            "metric": str,
        }
        tables.append(one_host(pd.read_csv(path, sep="\t", dtype=text), host, runtime, path))
    return Profiles(*tables)


def measured_of(stats: Path, host: str, runtime: str) -> pd.DataFrame | None:
    path = stats / "pairs" / "interference.tsv"
    if not path.exists():
        return None
    table = pd.read_csv(path, sep="\t", dtype={"case": str, "target": str, "partner": str, "metric": str})
    rows = table[(table["host"] == host) & (table["runtime"] == runtime)]
    return rows if not rows.empty else None


def run_order_of(stats: Path) -> dict | None:
    """What decides the order a session's runs were drawn in (core/run_order.py: the set of runs,
    from its config's runtimes and studies, and the run_order setting), if its environment.json
    recorded it."""
    path = stats / "environment.json"
    if not path.exists():
        return None
    config = json.loads(path.read_text()).get("config", {})
    order = config.get("run_order")
    if not isinstance(order, dict):
        return None
    defaults = load_once(config_step.SCHEMA_PATH)["properties"]["run_order"]["properties"]
    order = {k: v["default"] for k, v in defaults.items()} | order
    return {**order, "seed": order["seed"] if order["shuffle"] else None,
            "runs": json.dumps([config.get("runtimes"), config.get("studies")], sort_keys=True)}  # fmt: skip


def same_order_warning(stats: Path, replicate: Path) -> str:
    """A replicate whose runs came in the measured session's order shares that order's effects
    (a key measured early in both, on a warming machine, is off the same way in both), so the
    replicate's MAE understates what measuring again moves: said, not refused."""
    a, b = run_order_of(stats), run_order_of(replicate)
    if a is None or a != b:
        return ""
    how = f"the same random order (seed {a['seed']})" if a["shuffle"] else "the same sorted order"
    return (
        f"note: the replicate ran its runs in {how} as the measured session; a second session "
        "drawn in another order (config/placement-replicate-2.yaml: run_order seed 2) makes "
        "the replicate's MAE independent of the order"
    )


def metrics_for(services: list[str], chosen: list[str]) -> dict[str, str]:
    ms = registry()
    unknown = [s for s in services if s not in ms]
    if unknown:
        raise PlacementError(f"unknown microservice(s) {unknown}; known: {sorted(ms)}")
    out = {s: ms[s].metrics[0].name for s in services}
    for item in chosen:
        sid, _, metric = item.partition("=")
        if sid not in out or metric not in {m.name for m in ms[sid].metrics}:
            raise PlacementError(f"--metric {item!r}: not ID=METRIC of one of {services}")
        out[sid] = metric
    return out


def advice_of(args) -> tuple[pd.DataFrame, dict[str, str]]:
    """The advice table of args.services (written to results/stats/placement/) and the metrics."""
    if not 2 <= len(args.services) <= 3 or len(set(args.services)) != len(args.services):
        raise PlacementError("--services takes 2 or 3 different microservices")
    metrics = metrics_for(args.services, args.metric)
    profiles_dir = one_profiles_dir(args)
    if args.model in CPU_MODELS:
        curves = cpu_curves_of(profiles_dirs(args), args.host, args.runtime, SWEEP_OF[args.model])
        higher = {s: next(m.higher_is_better for m in registry()[s].metrics if m.name == metrics[s])
                  for s in args.services}  # fmt: skip
        rest = (
            pinned_rest_of(profiles_of(profiles_dir, args.host, args.runtime), profiles_dir)
            if args.model == PINNED
            else None
        )
        profiles = None
        total_of = lambda placement: cpu_total(curves, placement, metrics, higher, args.cores, rest)  # noqa: E731
    else:
        profiles, total_of = profiles_of(profiles_dir, args.host, args.runtime), None
    table = advise(profiles, args.services, metrics, args.cores, bytes_of(args.memory),
                   bytes_of(args.memory_per_member), measured_of(args.stats, args.host, args.runtime),
                   total_of, model_error(args))  # fmt: skip
    out = args.stats / "placement" / advice_name(args)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, sep="\t", index=False)
    return table, metrics


def pinned_rest_of(profiles: Profiles, profiles_dir: Path):
    """pinned.rest_of the profiles, or a clear error where they have no placement 3b."""
    rest = pinned.rest_of(profiles)
    if rest is None:
        raise PlacementError(f"{profiles_dir / 'profiling'} has no placement 3b: profile pinned bubbles first "
                             "(config/cpu-shares-pinned.yaml)")  # fmt: skip
    return rest


def model_suffix(model: str) -> str:
    """The file names' part of a model: none for the bubble model, else its name (+ as -)."""
    return "" if model == "profile" else "-" + model.replace("+", "-")


def model_error(args) -> float | None:
    """The SD of a member's IR the model gets wrong (--model-error POINTS, or auto: the root mean
    square error of its validation in --stats), None without one."""
    if not args.model_error:
        return None
    if args.model_error != "auto":
        try:
            return float(args.model_error) / 100
        except ValueError:
            raise PlacementError(f"--model-error {args.model_error!r}: IR points (e.g. 15) or auto") from None
    path = args.stats / "placement" / f"validation{model_suffix(args.model)}.tsv"
    if not path.exists():
        raise PlacementError(f"--model-error auto reads {path}: validate the model first")
    errors = pd.read_csv(path, sep="\t")["error_pp"].dropna()
    if errors.empty:
        raise PlacementError(f"{path} has no predicted and measured IR: no model error to read")
    sd = float(np.sqrt(np.mean(np.square(errors)))) / 100
    print(f"the model's error: {100 * sd:.1f} IR points a member (root mean square over {len(errors)} "
          f"validated IRs, {path})")  # fmt: skip
    return sd


def advice_name(args) -> str:
    return f"advice{model_suffix(args.model)}-{'+'.join(args.services)}.tsv"


def run_check(args) -> int:
    table, metrics = advice_of(args)
    if not args.samples.exists():
        raise PlacementError(f"{args.samples} is missing: run the pair study with these placements first")
    samples = one_host(
        pd.read_csv(args.samples, sep="\t", low_memory=False), args.host, args.runtime, args.samples
    )
    by_label = {p.label: p for p in placements(args.services)}
    labels_of = lambda label: {m: by_label[label].partner_of(m) for m in by_label[label].members}  # noqa: E731
    result = advice_check.check(table, samples, labels_of, metrics)
    out = args.stats / "placement" / f"advice-check-{'+'.join(args.services)}.tsv"
    result.to_csv(out, sep="\t", index=False)
    if result.empty:
        print(f"fewer than two ranked placements of {', '.join(args.services)} measured "
              f"{advice_check.MIN_RUNS} times or more: nothing to check (written: {out})")  # fmt: skip
        return 0
    print(result.to_string(index=False, na_rep="–"))
    print(f"written: {out}")
    return 0


def run_advise(args) -> int:
    table, metrics = advice_of(args)
    out = args.stats / "placement" / advice_name(args)
    shown = table[["rank", "placement", "limited", "total_slowdown", "slowdown_low", "slowdown_high", "p_best",
                   "indistinguishable_from_first", "measured_total_slowdown", "excluded_because", "reason"]]  # fmt: skip
    covers = "the profiles' runs and the model's error" if args.model_error else "the profiles' runs"
    print(f"Placements of {', '.join(args.services)} on {args.cores} cores and {args.memory} "
          f"(metrics: {', '.join(f'{k} {v}' for k, v in metrics.items())}); slowdown = the sum of "
          f"-IR, lower is better, 95 % interval from {covers}; p_best: the chance it is the best:")  # fmt: skip
    print(readable(shown).to_string(index=False, na_rep="–"))
    print(f"written: {out}")
    return 0


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """The table as printed: ranks as whole numbers, other numbers to 3 decimals, no -0 (the
    written table keeps every digit)."""
    table = table.copy()
    for column in table.select_dtypes("number"):
        if column == "rank":
            whole = ["–" if pd.isna(v) else int(v) for v in table[column]]
            table[column] = pd.Series(whole, index=table.index, dtype=object)
        else:
            table[column] = table[column].round(3) + 0.0  # + 0.0 turns -0.0 into 0.0
    return table


def profiles_dirs(args) -> list[Path]:
    """--profiles (one session's results/stats or several: the CPU models pool them), or --stats."""
    return list(args.profiles or [args.stats])


def one_profiles_dir(args) -> Path:
    """The one profiles folder the bubble models read (the first, for a CPU model), and an
    error where a bubble model is given several (only the CPU models' speeds are pooled)."""
    dirs = profiles_dirs(args)
    if len(dirs) > 1 and args.model not in SHARE_MODELS:
        raise PlacementError(f"--model {args.model} reads one session's profiles; several (--profiles "
                             "A B ...) are pooled for the CPU-share models cpu-shares and cpu-busy")  # fmt: skip
    return dirs[0]


def cpu_curves_of(stats_dirs: list[Path], host: str, runtime: str, sweep: str = "1q") -> dict:
    """The speed curves from one session's cpu_speed.tsv, or several pooled (pooled_speed.py)."""
    tables = []
    for stats in stats_dirs:
        path = stats / "profiling" / "cpu_speed.tsv"
        if not path.exists():
            raise PlacementError(f"{path} is missing: run the quota sweep first (config/cpu-shares.yaml)")
        text = {"host": str, "runtime": str, "microservice": str, "metric": str, "case": str}
        table = one_host(pd.read_csv(path, sep="\t", dtype=text), host, runtime, path)
        if table.empty or not (table["case"] == sweep).any():
            what = (
                "quota sweep (studies.profiling.quotas)"
                if sweep == "1q"
                else "busy sweep (studies.profiling.busy)"
            )
            raise PlacementError(f"{path} has no {what}")
        tables.append(table)
    return cpu_shares.curves(pooled_speed.pooled(tables), sweep=sweep)


def corrected_by(predicted: pd.DataFrame, curves: dict, args) -> pd.DataFrame:
    """The CPU-share predictions corrected by the residuals of the session in --correct-from."""
    training = measured_of(args.correct_from, args.host, args.runtime)
    if training is None:
        raise PlacementError(
            f"{args.correct_from / 'pairs' / 'interference.tsv'} has no measured pairs of this host"
        )
    units = concurrent_rows(training)
    rows = validation_rows(cpu_shares.predict_units(curves, units, args.cores), training)
    threads = {ms: c.threads for (ms, _), c in curves.items()}
    return cpu_correction.corrected(predicted, cpu_correction.residuals(rows, threads), threads)


def run_validate(args) -> int:
    profiles_dir = one_profiles_dir(args)
    if args.model in CPU_MODELS:
        curves = cpu_curves_of(profiles_dirs(args), args.host, args.runtime, SWEEP_OF[args.model])
    if args.model not in SHARE_MODELS:
        profiles = profiles_of(profiles_dir, args.host, args.runtime)
    if args.model == PINNED:
        pinned_rest_of(profiles, profiles_dir)  # says so when the profiles have no placement 3b
    measured = measured_of(args.stats, args.host, args.runtime)
    if measured is None:
        raise PlacementError(
            f"{args.stats / 'pairs' / 'interference.tsv'} has no measured pairs of this host"
        )
    # Exactly the measured units (pairs, triples, Case 2-3a), each from the profiles alone.
    units = concurrent_rows(measured)
    name, suffix = args.model.replace("-", "_").replace("+", "_"), model_suffix(args.model)
    if args.model == PINNED:  # item 2: the CPU part times the rest from bubbles on the other core
        predicted, first = pinned.predict_units(curves, profiles, units, args.cores), None
    elif args.model in SHARE_MODELS:
        predicted, first = cpu_shares.predict_units(curves, units, args.cores), None
        if args.correct_from:  # item 3: learnt on another session's pairs, its target's own held out
            predicted = corrected_by(predicted, curves, args)
            name, suffix = f"{name}_corrected", f"{suffix}-corrected"
    else:
        predicted, suffix = predict_units(profiles, units), ""
        first = predict_units(profiles, units, rule="product")  # the first model, scored beside it
    replicate = None
    if args.replicate:  # the same pairs measured again, in another session of this host
        replicate = measured_of(args.replicate, args.host, args.runtime)
        if replicate is None:
            raise PlacementError(
                f"{args.replicate / 'pairs' / 'interference.tsv'} has no measured pairs of this host"
            )
        warning = same_order_warning(args.stats, args.replicate)
        if warning:
            print(warning, file=sys.stderr)
    rows, summary, failed = validate(predicted, measured, first=first, replicate=replicate, name=name)
    out = args.stats / "placement"
    out.mkdir(parents=True, exist_ok=True)
    # The advice judged: each pair set's placements ordered and picked as measured (advice_score.py).
    firsts = {m: spec.metrics[0].name for m, spec in registry().items()}
    judged = advice_score.score(rows, firsts, name)
    for base, table in (("validation", rows), ("validation_summary", summary), ("failures", failed),
                        ("advice_score", judged)):  # fmt: skip
        table.to_csv(out / f"{base}{suffix}.tsv", sep="\t", index=False)
    # Always written (the pipeline's rule declares it): with nothing predicted, a figure that says so.
    figure(rows).savefig(out / f"validation{suffix}.png", dpi=130, bbox_inches="tight", facecolor="white")
    print(summary.to_string(index=False, na_rep="–"))
    print(judged.to_string(index=False, na_rep="–"))
    print(f"{len(failed)} measured IRs outside their prediction interval; written: {out}/")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["advise", "validate", "check"])
    ap.add_argument("--stats", type=Path, default=Path("results/stats"))
    ap.add_argument("--host", default=socket.gethostname().split(".")[0])
    ap.add_argument("--runtime", default="docker")
    ap.add_argument(
        "--replicate",
        type=Path,
        help="validate: another session's results/stats with the same pairs measured again (scored as "
        "the floor: the measurement predicting itself)",
    )
    ap.add_argument(
        "--model",
        choices=["profile", *CPU_MODELS],
        default="profile",
        help="advise, validate: the bubble model (profile) or the CPU-share model (cpu_shares.py) from the "
        "quota sweep (cpu-shares, cpu-shares+pinned) or the busy sweep (cpu-busy)",
    )
    ap.add_argument(
        "--profiles",
        type=Path,
        nargs="+",
        help="the profiles' results/stats (default: --stats); for cpu-shares and cpu-busy several "
        "sessions' of this host, pooled point by point (studies/profiling/pooled_speed.py)",
    )
    ap.add_argument(
        "--correct-from",
        type=Path,
        help="validate --model cpu-shares or cpu-busy: correct it by another session's pairs (its results/stats; "
        "cpu_correction.py), each target's own pairs held out",
    )
    ap.add_argument(
        "--model-error",
        default="",
        help="advise: the model's own error in IR points a member (or auto: its validation's root mean "
        "square error), added to the intervals and the chance of being best",
    )
    ap.add_argument("--services", nargs="+", default=[])
    ap.add_argument(
        "--samples",
        type=Path,
        default=Path("results/parsed/pairs/samples.tsv"),
        help="check: the pair study's samples",
    )
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--memory", default="4g")
    ap.add_argument(
        "--memory-per-member", default="1g", help="each member's Case 1 limit (the default config's)"
    )
    ap.add_argument("--metric", action="append", default=[], help="ID=METRIC, e.g. S=triad")
    args = ap.parse_args(argv)
    try:
        return {"advise": run_advise, "validate": run_validate, "check": run_check}[args.command](args)
    except PlacementError as e:
        print(f"placement: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
