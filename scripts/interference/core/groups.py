"""How a member of a group of microservices names the others (its partner label), the same in
the pair study's tables and in the placement predictor, so that a measured IR and its
prediction meet on (case, target, partner).

Beside others all in its container, or all in containers of their own, the label is their ids
sorted and joined by "+" ("S"; "NS+S"). In a mixed layout (some share the member's container,
some are apart) it is those sharing, "|", those apart: "S|L" for a member sharing its container
with S while L runs apart; the member that runs apart names the others as "NS+S"."""

from __future__ import annotations

# A partner label naming two or more others: a triple's member (the papers measured pairs only).
OF_A_TRIPLE = r"[+|]"


def _joined(ids) -> str:
    return "+".join(sorted(ids))


def partner_label(together=(), apart=()) -> str:
    if together and apart:
        return f"{_joined(together)}|{_joined(apart)}"
    return _joined(together) or _joined(apart)


def labels(containers) -> list[str]:
    """Each member's partner label, members in the containers' order (a list of lists of ids)."""
    out = []
    for k, mine in enumerate(containers):
        elsewhere = [m for j, c in enumerate(containers) if j != k for m in c]
        for i in range(len(mine)):
            out.append(partner_label([*mine[:i], *mine[i + 1 :]], elsewhere))
    return out


def read_partner_label(label: str, shares_container: bool) -> tuple[list[str], list[str]]:
    """(sharing the member's container, apart) of a label; a label without "|" is all sharing
    where its case puts the group in one container (`shares_container`), else all apart."""
    if "|" in label:
        together, apart = label.split("|")
        return together.split("+"), apart.split("+")
    ids = label.split("+") if label else []
    return (ids, []) if shares_container else ([], ids)
