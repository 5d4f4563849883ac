"""Placement advice, part 3: where to put 2 or 3 microservices on one host, ranked by their
predicted total slowdown (predict.py), with the pair study's measurement beside it where one
exists (interference.tsv).

Placements: every way to group the members into containers (all together, each apart, and for 3
one pair together with the third apart), each without limits or with limits. Limits follow Case
1 and 3b: each member brings one core and its Case 1 memory limit; apart, each container gets its
own cores (Case 3b); together, the container gets its members' cores and memory summed, so that
they share those cores (predicted with the same-container curves and no limit effect, since each
member keeps its Case 1 share; no measured case corresponds to it). A limited placement needs
one core per member and the limits' memory; an unlimited one is always feasible (the kernel
shares what there is). An excluded placement stays in the table with the reason.

Total slowdown = Σ over members of −IR of the metric chosen for each microservice (> 0 is worse),
its interval the 2.5/97.5 % quantiles of the Monte Carlo draws summed per draw (a partner's
pressure is the same draw in every member's prediction, so the sum is correlated as it should).
The measured total (where every member's IR of that placement's case was measured) is the same
sum of interference.tsv's IRs.

How sure it is (issue 55, item 5): `p_best`, the share of the draws in which the placement has the
least total of the ranked ones (the chance it is the best, from the predictive intervals: the
profiles' noise, not the model's error, which validate.py measures), and
`indistinguishable_from_first`, whether the 95 % interval of its total less the first's (per
draw) holds 0. The model: the bubble profiles (predicted_total) or the CPU-share model
(cpu_total, cpu_shares.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from interference.core.groups import labels
from interference.stats.descriptive import CONFIDENCE
from interference.stats.resampling import rng_for
from interference.studies.profiling import cpu_shares, pinned
from interference.studies.profiling.predict import Profiles, predict_member

SEED = 20240601

ADVICE_COLUMNS = [
    "rank", "placement", "limited", "case", "total_slowdown", "slowdown_low", "slowdown_high",
    "p_best", "indistinguishable_from_first", "members", "measured", "measured_total_slowdown", "feasible",
    "excluded_because", "reason",
]  # fmt: skip


@dataclass(frozen=True)
class Placement:
    containers: tuple[tuple[str, ...], ...]  # the members of each container
    limited: bool

    @property
    def label(self) -> str:
        return " | ".join("+".join(c) for c in self.containers)

    @property
    def members(self) -> list[str]:
        return [m for c in self.containers for m in c]

    @property
    def case(self) -> str:
        """The pair study's case this placement is ("" when none): measured rows exist only there."""
        together, apart = len(self.containers) == 1, all(len(c) == 1 for c in self.containers)
        if together and not self.limited:
            return "2"
        if apart and len(self.containers) > 1:
            return "3b" if self.limited else "3a"
        if len(self.members) == 3 and not self.limited:
            return "2-3a"  # two share a container, the third apart
        return ""

    def partner_of(self, target: str) -> str:
        """The target's partner label (core/groups.py) in this placement."""
        return labels(self.containers)[self.members.index(target)]


def groupings(members: list[str]) -> list[tuple[tuple[str, ...], ...]]:
    """Every partition of the members into containers, each once (names sorted)."""
    if not members:
        return [()]
    first, rest = members[0], members[1:]
    out = set()
    for partition in groupings(rest):
        # The first member in a container of its own, or joining one of the rest's containers.
        options = [(*partition, (first,))]
        options += [(*partition[:i], (first, *c), *partition[i + 1 :]) for i, c in enumerate(partition)]
        out |= {tuple(sorted(tuple(sorted(c)) for c in option)) for option in options}
    return sorted(out, key=lambda p: (len(p), p))


def placements(members: list[str]) -> list[Placement]:
    if not 2 <= len(members) <= 3:
        raise ValueError("advice is for 2 or 3 microservices")
    return [Placement(g, limited) for g in groupings(list(members)) for limited in (False, True)]


def excluded_because(placement: Placement, cores: int, memory: float, memory_per_member: float) -> str:
    """Why the host cannot hold this placement ("" when it can)."""
    if not placement.limited:
        return ""
    n, reasons = len(placement.members), []
    if cores < n:
        reasons.append(
            f"limited containers take one core per member, disjoint: {n} needed, {cores} on the host"
        )
    if n * memory_per_member > memory:
        reasons.append(f"the memory limits add up to {n * memory_per_member:g}, the host has {memory:g}")
    return "; ".join(reasons)


def predicted_total(profiles: Profiles, placement: Placement, metrics: dict) -> dict:
    """Each member's IR (its chosen metric) in the placement, and the total slowdown with its
    interval."""
    irs, draws, reasons = [], [], []
    for k, container in enumerate(placement.containers):
        others = [m for j, c in enumerate(placement.containers) if j != k for m in c]
        for i, target in enumerate(container):
            together = list(container[:i] + container[i + 1 :])
            p = predict_member(profiles, target, metrics[target], together, others, placement.limited)
            irs.append((target, p))
            draws.append(-p.draws)
            reasons += [f"{target}: {p.reason}"] if p.reason else []
    total = np.sum(draws, axis=0)
    low, high = (
        # A member without a prediction leaves no interval (a note alone, e.g. a resource not
        # profiled, does not).
        np.quantile(total, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
        if np.isfinite(total).all()
        else (np.nan,) * 2
    )
    return {
        "total_slowdown": 0.0 - sum(p.ir for _, p in irs),  # 0.0 - x: never a negative zero
        "slowdown_low": low,
        "slowdown_high": high,
        "members": "; ".join(f"{t} {p.ir:+.3f} [{p.low:+.3f}, {p.high:+.3f}]" for t, p in irs),
        "reason": "; ".join(reasons),
        "draws": total,
    }


def cpu_total(curves: dict, placement: Placement, metrics: dict, higher: dict, cores: int, rest=None) -> dict:
    """predicted_total by the CPU-share model: unlimited, the containers share the host's cores;
    limited, each container has its members' Case 1 cores (one each) to itself. With `rest`
    (pinned.rest_of: a member's IR beside its partners from bubbles on the other core), each
    member's 1 + IR is its CPU part's times the rest's (pinned.py)."""
    missing = [m for m in placement.members if (m, metrics[m]) not in curves]
    if missing:
        return {"total_slowdown": np.nan, "reason": f"no CPU profile of {', '.join(sorted(set(missing)))}"}
    groups = [list(c) for c in placement.containers]
    n_draws = len(next(iter(curves.values())).case1_draws)
    # Limited: each container alone on its members' cores; unlimited: all of them on the host's.
    parts = [([g], len(g)) for g in groups] if placement.limited else [(groups, cores)]
    irs = []
    for containers, capacity in parts:
        if placement.limited and len(containers[0]) == 1:  # alone on its own core: Case 1 itself
            irs.append((containers[0][0], 0.0, np.zeros(n_draws)))
            continue
        names = [m for c in containers for m in c]
        got = cpu_shares.member_irs(curves, containers, capacity,
                                    {i: (metrics[m], higher[m]) for i, m in enumerate(names)})  # fmt: skip
        irs += [(names[i], ir, draws) for i, (_, ir, draws) in sorted(got.items())]
    if rest is not None:
        irs, missing = pinned.with_rest(irs, placement.members, metrics, rest)
        if missing:
            return {"total_slowdown": np.nan, "reason": missing}
    total = -np.sum([d for _, _, d in irs], axis=0)
    low, high = np.quantile(total, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
    return {
        "total_slowdown": 0.0 - sum(ir for _, ir, _ in irs),
        "slowdown_low": low,
        "slowdown_high": high,
        "members": "; ".join(f"{t} {ir:+.3f}" for t, ir, _ in irs),
        "reason": "",
        "draws": total,
    }


def measured_total(placement: Placement, metrics: dict, measured: pd.DataFrame | None) -> float:
    """−Σ of the members' measured IRs in the placement's case, NaN unless every one was measured."""
    if measured is None or not placement.case:
        return np.nan
    irs = measured.set_index(["case", "target", "partner", "metric"]).ir.astype(float)
    total = 0.0
    for target in placement.members:
        key = (placement.case, target, placement.partner_of(target), metrics[target])
        if key not in irs.index or not np.isfinite(irs[key]):
            return np.nan
        total -= irs[key]
    return total


def advise(
    profiles: Profiles,
    members: list[str],
    metrics: dict[str, str],
    cores: int,
    memory: float,
    memory_per_member: float,
    measured: pd.DataFrame | None = None,
    total_of=None,
    model_sd: float | None = None,
) -> pd.DataFrame:
    """The placements of `members` (2 or 3 microservice ids) on a host of `cores` cores and
    `memory` memory (each member's Case 1 limit `memory_per_member`, same unit), ranked by
    predicted total slowdown of the metric chosen per microservice (metrics[id]); `measured`:
    interference.tsv rows of this host and runtime (ADVICE_COLUMNS); `total_of(placement)`: another
    model's predicted_total (default: the bubble profiles'); `model_sd`: the model's own error
    (SD of a member's IR), added to every member of every placement as an independent normal
    draw, so that p_best and the intervals cover it (conservative for differences: a model's
    errors for one member in two placements are alike, not independent)."""
    total_of = total_of or (lambda placement: predicted_total(profiles, placement, metrics))
    if measured is not None:
        measured = measured.astype({c: str for c in ("case", "target", "partner", "metric")})
        if "host" in measured and measured[["host", "runtime"]].drop_duplicates().shape[0] > 1:
            raise ValueError("measured rows of several hosts or runtimes: pass those of one")
    rows, draws = [], {}
    for placement in placements(members):
        why = excluded_because(placement, cores, memory, memory_per_member)
        row = {"placement": placement.label, "limited": placement.limited, "case": placement.case}
        row |= {"feasible": not why, "excluded_because": why}
        if not why:
            predicted = total_of(placement)
            drawn = predicted.pop("draws", None)
            if model_sd and drawn is not None:
                rng = rng_for(SEED, ("model error", placement.label, placement.limited))
                drawn = drawn + rng.normal(0, model_sd, (len(placement.members), len(drawn))).sum(axis=0)
                low, high = np.quantile(drawn, [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2])
                predicted |= {"slowdown_low": low, "slowdown_high": high}
            draws[placement.label, placement.limited] = drawn
            row |= predicted
            row["measured_total_slowdown"] = measured_total(placement, metrics, measured)
        rows.append(row)
    table = pd.DataFrame(rows).reindex(columns=ADVICE_COLUMNS)
    table["measured"] = table.measured_total_slowdown.notna()
    # Feasible and predicted first, least slowdown first; then the unpredicted; then the excluded.
    order = table.assign(_group=np.where(~table.feasible, 2, np.where(table.total_slowdown.notna(), 0, 1)))
    table = table.loc[order.sort_values(["_group", "total_slowdown"], kind="stable").index].reset_index(
        drop=True
    )
    ranked = table.feasible & table.total_slowdown.notna()
    table.loc[ranked, "rank"] = np.arange(1, ranked.sum() + 1)
    _how_sure(table, ranked, draws)
    return table


def _how_sure(table: pd.DataFrame, ranked: pd.Series, draws: dict) -> None:
    """p_best and indistinguishable_from_first of the ranked rows, from their draws."""
    keys = [(p, bool(limited)) for p, limited in zip(table.placement[ranked], table.limited[ranked])]
    drawn = [draws.get(k) for k in keys]
    if not keys or any(d is None or not np.isfinite(d).all() for d in drawn):
        return
    matrix = np.vstack(drawn)  # placements x draws
    # A draw in which several placements tie for the least total counts a share for each of them
    # (two placements the model cannot tell apart, e.g. one container limited to every core or not).
    tied = matrix == matrix.min(axis=0)
    best = (tied / tied.sum(axis=0)).mean(axis=1)
    low, high = np.quantile(matrix - matrix[0], [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2], axis=1)
    index = table.index[ranked]
    table["indistinguishable_from_first"] = table["indistinguishable_from_first"].astype(object)
    table.loc[index, "p_best"] = best
    table.loc[index[1:], "indistinguishable_from_first"] = ((low <= 0) & (high >= 0))[1:]
