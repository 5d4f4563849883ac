"""The pair study's checks as objects: each knows the cells it reads (`reads`: one Selector per
part) and so what the plan must run for it (`needs`), beside what it measures. The planner asks
a check for its needs without loading the statistics (Study.finding_needs); checks.py attaches
each measure by name (`measures`) when the findings step scores."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from interference.studies.pairs.selection import Selector, needs_of


def one(args: dict) -> list[Selector]:
    """Most checks read one selection, their args'."""
    return [Selector.of(args)]


def cases_a_and_b(args: dict) -> list[Selector]:
    """A contrast of cases reads its args' cells in case a, then in case b."""
    return [Selector.of(args).but(cases=[args["a"]]), Selector.of(args).but(cases=[args["b"]])]


def partners_a_and_b(args: dict) -> list[Selector]:
    """A contrast of partners reads its args' cells beside partners a, then beside partners b."""
    return [Selector.of(args).but(partners=args["a"]), Selector.of(args).but(partners=args["b"])]


@dataclass
class Check:
    name: str
    reads: Callable[[dict], list[Selector]] = one
    # Why a config of the findings' shared definition cannot give it, when it cannot.
    other_definition: str = ""
    measure: Callable | None = None  # (ctx, args) -> Measure | Skip, attached by checks.py

    @property
    def quantity(self) -> str:
        return getattr(self.measure, "quantity", "ir")

    def __call__(self, ctx, args: dict):
        if self.measure is None:
            raise LookupError(f"pair study check {self.name!r} has no measure (import its checks module)")
        return self.measure(ctx, args)

    def needs(self, args: dict) -> dict | str:
        if "host" in args:
            return f"needs a second host ({args['host']})"
        return self.other_definition or needs_of(self.reads(args))


CHECKS: dict[str, Check] = {
    c.name: c
    for c in (
        Check("mean_ir"),
        Check("contrast", cases_a_and_b),
        Check("same_vs_mixed"),
        Check("partner_contrast", partners_a_and_b),
        Check(
            "limit_effect",
            lambda args: [],
            "needs Case 1 limited to the whole machine, another definition of the study",
        ),  # fmt: skip
    )
}


def measures(name: str):
    """Attach the decorated function as check `name`'s measure: a name the registry lacks, or one
    measured twice, is an error."""

    def attach(measure):
        if name not in CHECKS:
            raise LookupError(f"no pair study check {name!r} to measure (registry.CHECKS)")
        if CHECKS[name].measure is not None:
            raise ValueError(f"pair study check {name!r} is measured twice")
        CHECKS[name].measure = measure
        return measure

    return attach
