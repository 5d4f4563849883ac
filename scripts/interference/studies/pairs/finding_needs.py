"""Which cells of the pair study a finding's check reads, as keys of the study's config part
(steps/plan.py merges them): its microservices, pairs and cases, from the check's args as
the catalogue gives them (cells.py's reading of the same args)."""

from __future__ import annotations

from interference.studies.pairs.cases import PAPERS_CONCURRENT_CASES, UNLIMITED, pair_name

# The microservices the papers paired: a finding that names none is about these.
PAPERS = ("L", "S", "B", "NS", "NR", "Y")
# Checks that need the study at another definition than the findings' shared one.
OTHER_DEFINITION = {
    "limit_effect": "needs Case 1 limited to the whole machine, another definition of the study"
}


def needs(check: str, args: dict) -> dict | str:
    if "host" in args:
        return f"needs a second host ({args['host']})"
    if check in OTHER_DEFINITION:
        return OTHER_DEFINITION[check]
    targets = list(args.get("targets", PAPERS))
    partners = list(args.get("partners", PAPERS))
    if check == "partner_contrast":
        partners = [*args["a"], *[p for p in args["b"] if p not in args["a"]]]
    cases = list(args.get("cases", PAPERS_CONCURRENT_CASES))
    if check == "contrast":
        cases = [args["a"], args["b"]]
    pairs = []
    for t in targets:
        for p in partners:
            if (args.get("pairing") == "mixed" and t == p) or (args.get("pairing") == "same" and t != p):
                continue
            name = pair_name(sorted((t, p), key=PAPERS.index if {t, p} <= set(PAPERS) else str))
            if name not in pairs:
                pairs.append(name)
    alone = ["1", UNLIMITED] if args.get("effect") == "partner" else ["1"]
    members = [m for m in PAPERS if m in {*targets, *partners}]
    return {"microservices": members, "pairs": pairs, "cases": [*alone, *cases]}
