"""The pair study's records: a run's identity (PairKey) and what its execute() adds to meta.json
(PairResults: the overlap window, each member and each member's iterations, PairIteration).
A key's string form is made and read by the study's run_key (__init__.py, planning's), so that
the parse step's code inputs do not include studies/base.py.

Each type has one serializer (to_json) and one reader (from_json); the reader names the field of
a bad record (core/records.RecordError). In meta.json a member's iterations stay under the key
`iterations`, as every saved run has them; in the types they are `iteration_records`, so that
the word `iterations` means only the count the settings ask for."""

from __future__ import annotations

from dataclasses import dataclass

from interference.core.records import NUMBER, RecordError, field_of
from interference.studies.pairs import cases


@dataclass(frozen=True)
class PairKey:
    """Which run of the study: the case it runs as, its members, and whether it is the Case 1
    baseline measured again after every other run (the drift check: key case `1-end`)."""

    case: str
    members: tuple[str, ...]
    at_end: bool = False

    def __post_init__(self):
        if self.case not in cases.CASES:
            raise ValueError(f"run case {self.case!r} is none of {', '.join(cases.CASES)}")
        if self.at_end and self.case != "1":
            raise ValueError(f"only Case 1 is measured again at the end, not Case {self.case}")
        n = {**dict.fromkeys(cases.ALONE_CASES, (1,)), cases.MIXED: (3,)}.get(
            self.case, (2, 3)
        )  # or a triple
        if len(self.members) not in n:
            said = " or ".join(map(str, n))
            raise ValueError(f"Case {self.case} runs {said} microservice(s), not {len(self.members)}")

    @property
    def pair(self) -> str:
        return cases.pair_name(self.members)

    @property
    def key_case(self) -> str:
        """The case of its key and of its samples: the baseline measured at the end is one of its own."""
        return cases.END if self.at_end else self.case

    def key_fields(self) -> dict[str, str]:
        """Its fields of the run key (PairsStudy.run_key makes the string: planning's business)."""
        return {"case": self.key_case, "pair": self.pair}

    @classmethod
    def from_key_fields(cls, f: dict[str, str]) -> PairKey:
        at_end = f["case"] == cases.END
        return cls("1" if at_end else f["case"], tuple(cases.members_of(f["pair"])), at_end)

    @classmethod
    def from_settings(cls, s: dict, where: str = "settings") -> PairKey:
        """The run of its settings (as the runner got them, and meta.json keeps them)."""
        case = field_of(s, where, "case", str, label="settings.case")
        pair = field_of(s, where, "pair", str, label="settings.pair")
        at_end = field_of(s, where, "at_end", bool, default=False, label="settings.at_end")
        return cls(case, tuple(cases.members_of(pair)), at_end)

    def settings(self) -> dict:
        """Its fields in the run's settings (at_end only where true: the others keep theirs)."""
        return {"case": self.case, **({"at_end": True} if self.at_end else {}), "pair": self.pair}


@dataclass(frozen=True)
class PairIteration:
    """One iteration of a member as its loop timed it (iterations.tsv), with its status and
    whether it ran wholly inside the overlap window. Times are as read (never rounded)."""

    iteration: int
    start: float
    end: float
    exit_code: int
    status: str
    stdout: str  # paths relative to the run's raw folder
    stderr: str
    in_overlap: bool
    # CPUs' worth its container used (from its cgroup); None where the loop could not read it.
    own_cpu_cores: float | None = None
    # The paired design (phases.py): with, without or mixed, and its block; "" and 0 otherwise.
    phase: str = ""
    block: int = 0

    def to_json(self) -> dict:
        own = {} if self.own_cpu_cores is None else {"own_cpu_cores": self.own_cpu_cores}
        if self.phase:
            own |= {"phase": self.phase, "block": self.block}
        return own | {
            "iteration": self.iteration,
            "start": self.start,
            "end": self.end,
            "exit_code": self.exit_code,
            "status": self.status,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "in_overlap": self.in_overlap,
        }

    @classmethod
    def from_json(cls, d, where: str) -> PairIteration:
        if not isinstance(d, dict):
            raise RecordError(f"{where}: an iteration is a JSON object, not {d!r}")
        return cls(
            iteration=field_of(d, where, "iteration", int),
            start=field_of(d, where, "start", NUMBER),
            end=field_of(d, where, "end", NUMBER),
            exit_code=field_of(d, where, "exit_code", int),
            status=field_of(d, where, "status", str),
            stdout=field_of(d, where, "stdout", str),
            stderr=field_of(d, where, "stderr", str),
            in_overlap=field_of(d, where, "in_overlap", bool),
            own_cpu_cores=field_of(d, where, "own_cpu_cores", (*NUMBER, type(None)), default=None),
            phase=field_of(d, where, "phase", str, default=""),
            block=field_of(d, where, "block", int, default=0),
        )


@dataclass(frozen=True)
class PairMember:
    """One member of a run: its microservice, raw folder, the cgroup limits its container read
    back, and its iterations."""

    member: int  # 1 or 2
    microservice: str
    dir: str
    limits_read_back: dict
    iteration_records: tuple[PairIteration, ...]

    @property
    def role(self) -> str:
        """Its name in the run (execute.py): the role of the container it ran in (member1, or
        member1+member2 when they shared one) and the start of its raw folder's name."""
        return f"member{self.member}"

    def to_json(self) -> dict:
        return {
            "member": self.member,
            "microservice": self.microservice,
            "dir": self.dir,
            "limits_read_back": self.limits_read_back,
            "iterations": [it.to_json() for it in self.iteration_records],
        }

    @classmethod
    def from_json(cls, d, where: str) -> PairMember:
        if not isinstance(d, dict):
            raise RecordError(f"{where}: a member is a JSON object, not {d!r}")
        member = field_of(d, where, "member", int)
        microservice = field_of(d, where, "microservice", str)
        its = field_of(d, where, "iterations", list)
        return cls(
            member=member,
            microservice=microservice,
            # The runner always wrote both; records made by hand for tests may leave them out.
            dir=field_of(d, where, "dir", str, default=f"member{member}-{microservice}"),
            limits_read_back=field_of(d, where, "limits_read_back", dict, default={}),
            iteration_records=tuple(
                PairIteration.from_json(it, f"{where} iterations[{i}]") for i, it in enumerate(its)
            ),
        )


@dataclass(frozen=True)
class PairOverlap:
    """The concurrent cases' overlap: from the later first start to the earlier last end."""

    start: float | None
    end: float | None
    window_s: float

    def to_json(self) -> dict:
        return {"start": self.start, "end": self.end, "window_s": self.window_s}

    @classmethod
    def from_json(cls, d: dict, where: str) -> PairOverlap:
        optional = (*NUMBER, type(None))
        return cls(
            field_of(d, where, "start", optional),
            field_of(d, where, "end", optional),
            field_of(d, where, "window_s", NUMBER),
        )


@dataclass(frozen=True)
class PairResults:
    """What a pair run adds to meta.json (execute.py writes it; parse.py and runs.py read it)."""

    members: tuple[PairMember, ...]
    overlap: PairOverlap | None = None  # None: Cases 1 and 1u
    # An adaptive rule's decision (adaptive.py); None with the papers' fixed counts.
    stopping: dict | None = None
    n_iterations: int | None = None
    n_failed: int | None = None
    # The paired design's schedule (phases.py): seed, switch and each phase; None without it.
    phases: dict | None = None

    @property
    def iteration_records(self) -> list[PairIteration]:
        return [it for m in self.members for it in m.iteration_records]

    def to_json(self) -> dict:
        return {
            "overlap": None if self.overlap is None else self.overlap.to_json(),
            "members": [m.to_json() for m in self.members],
            "stopping": self.stopping,
            "n_iterations": self.n_iterations,
            "n_failed": self.n_failed,
            **({"phases": self.phases} if self.phases else {}),
        }

    @classmethod
    def from_json(cls, meta: dict, where: str = "meta.json") -> PairResults:
        """The pair study's fields of a meta.json's contents (the others are the runner's)."""
        members = field_of(meta, where, "members", list)
        overlap = field_of(meta, where, "overlap", (dict, type(None)), default=None)
        return cls(
            members=tuple(PairMember.from_json(m, f"{where} members[{k}]") for k, m in enumerate(members)),
            overlap=None if overlap is None else PairOverlap.from_json(overlap, f"{where} overlap"),
            stopping=field_of(meta, where, "stopping", (dict, type(None)), default=None),
            n_iterations=field_of(meta, where, "n_iterations", (int, type(None)), default=None),
            n_failed=field_of(meta, where, "n_failed", (int, type(None)), default=None),
            phases=field_of(meta, where, "phases", (dict, type(None)), default=None),
        )
