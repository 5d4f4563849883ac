"""What differs between today's results and a saved session besides the measurements: the
study's definition (a comparison across definitions is refused unless asked for) and the
environment (hosts, engines, images, config), in words for the report's Changes section."""

from __future__ import annotations


def flat(d, prefix=""):
    out = {}
    for k, v in (d or {}).items():
        key = f"{prefix}{k}"
        out |= flat(v, key + ".") if isinstance(v, dict) else {key: v}
    return out


def definition_differences(today: dict, then: dict, study: str) -> list[tuple[str, object, object]]:
    """(key, today's value, the session's) for every key of the study's config part that differs
    (its runtimes aside: a runtime measured in only one of them has no cells to compare)."""
    now = flat({k: v for k, v in today["studies"].get(study, {}).items() if k != "runtimes"})
    was = flat({k: v for k, v in then.get("studies", {}).get(study, {}).items() if k != "runtimes"})
    return [(k, now.get(k), was.get(k)) for k in sorted(now.keys() | was.keys()) if now.get(k) != was.get(k)]


def environment_differences(today: dict, then: dict) -> list[str]:
    """What else differs between the two sessions' records: hosts, engines (version, kernel,
    drivers), images and config keys outside the studies, in words."""
    out = []
    hosts = (then.get("config", {}).get("host"), today.get("config", {}).get("host"))
    if hosts[0] != hosts[1]:
        out.append(f"host {hosts[0]} → {hosts[1]}")
    # The machine each session ran on (its own host's record), then the engines per runtime.
    a, b = then.get("hosts", {}).get(hosts[0], {}), today.get("hosts", {}).get(hosts[1], {})
    out += [
        f"host's {k}: {a[k]} → {b[k]}" for k in sorted(a.keys() & b.keys() - {"hostname"}) if a[k] != b[k]
    ]
    a, b = flat(then.get("engines", {})), flat(today.get("engines", {}))
    out += [f"engine {k}: {a[k]} → {b[k]}" for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    ids = {(i.get("runtime"), i.get("image")): i.get("id") for i in then.get("images", [])}
    for i in today.get("images", []):
        old = ids.get((i.get("runtime"), i.get("image")))
        if old and old != i.get("id"):
            out.append(
                f"image {i.get('runtime')}/{i.get('image')}: {str(old)[7:19]} → {str(i.get('id'))[7:19]}"
            )
    # The config outside the studies, but the keys that only say what to compare with.
    skip = ("studies", "host", "compare_with", "compare_across_definitions", "change_threshold")
    a = flat({k: v for k, v in then.get("config", {}).items() if k not in skip})
    b = flat({k: v for k, v in today.get("config", {}).items() if k not in skip})
    out += [
        f"config {k}: {a.get(k)} → {b.get(k)}" for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)
    ]
    return out
