"""The host, engines, images and config of the run (environment.json), for the whole paper.
Its blocks take the report's Document (rendering/document.py, which imports this module)."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import and_list, bytes_h, esc, plural
from interference.stores.stats_tables import read_tsv


def host_line(env: dict) -> str:
    parts = [
        f"{esc(host)} ({esc(h.get('cpu_model', '?'))}, {esc(plural(h['cores'], 'core')) if h.get('cores') else '? cores'}, "
        f"{bytes_h(h.get('memory_bytes'))} memory, Linux {esc(h.get('kernel', '?'))})"
        for host, h in env.get("hosts", {}).items()
    ]
    return and_list(parts) or "an unrecorded host"


def engine_line(env: dict) -> str:
    parts = [
        f"{esc(e.get('engine', rt))} {esc(e.get('version', '?'))} "
        f"(cgroup v{esc(e.get('cgroup_version', '?'))}, {esc(e.get('cgroup_driver', '?'))} driver, "
        f"{esc(e.get('storage_driver', '?'))} storage)"
        for rt, e in env.get("engines", {}).items()
    ]
    return and_list(parts) or "an unrecorded engine"


def _code(text) -> tuple:
    return ("html", f"<code>{esc(text)}</code>")


def setup_rows(env: dict) -> list[list]:
    rows = []
    for host, h in env.get("hosts", {}).items():
        rows += [
            ["Host", "name", host],
            ["Host", "CPU model", h.get("cpu_model")],
            ["Host", "cores", h.get("cores")],
            ["Host", "memory", bytes_h(h.get("memory_bytes"))],
            ["Host", "kernel", h.get("kernel")],
            ["Host", "OS", h.get("os")],
        ]
    for rt, e in env.get("engines", {}).items():
        rows += [
            [f"Engine ({rt})", "engine", f"{e.get('engine')} {e.get('version')}"],
            [f"Engine ({rt})", "cgroup", f"v{e.get('cgroup_version')} ({e.get('cgroup_driver')} driver)"],
            [f"Engine ({rt})", "storage driver", e.get("storage_driver")],
            [f"Engine ({rt})", "engine host OS", e.get("os")],
        ]
        # What a runtime says of its isolation (nested: the parent's flags; vm: acceleration).
        details = e.get("details") or {}
        if isinstance(details, list):  # runs recorded by different versions: what any said
            details = {k: v for d in details if isinstance(d, dict) for k, v in d.items()}
        rows += [[f"Engine ({rt})", k, v] for k, v in details.items()]
    rows.append(["Config", "sha256 of the validated config", _code(env.get("config_sha256", "–"))])
    for f in env.get("config_files", []):
        rows.append(
            ["Config", f"file read: {f['path']}", ("html", f"sha256 <code>{esc(f['sha256'])}</code>")]
        )
    cfg = env.get("config", {})
    rows.append(["Config", "runtimes", ", ".join(cfg.get("runtimes", [])) or "–"])
    rows.append(["Config", "base image", cfg.get("base_image", "–")])
    return [[a, b, c if isinstance(c, tuple) else ("" if c is None else str(c))] for a, b, c in rows]


def image_rows(env: dict) -> list[list]:
    rows = []
    for img in env.get("images", []):
        tv = ", ".join(f"{k} {v}" for k, v in (img.get("tool_versions") or {}).items())
        src = (
            img.get("base_image")
            and f"{img.get('base_image')} ({img.get('base_image_source', '?')})"
            or f"on {img.get('built_on', '?')}"
        )
        name = img.get("image")
        # Which engine holds it: the runtime, and the host when several hosts built images.
        where = [
            img.get(k) for k in ("host", "runtime") if len({i.get(k) for i in env.get("images", [])}) > 1
        ]
        if where:
            name = f"{name} ({', '.join(map(str, where))})"
        rows.append([name, _code(img.get("ref", "")), ("html", f"<code>{esc(str(img.get('id', ''))[:19])}…</code>"),
                     src, tv or "–"])  # fmt: skip
    return rows


ORDER_NUMERIC = ("n_runs", "kendall_tau", "span_s", "seed")


def order_block(doc) -> list[Block]:
    """The order the runs were measured in, per host: the plan against the runs' start times as
    the run-facts step measured it (results/stats/run_order.tsv); nothing is computed here."""
    path = doc.stats_dir / "run_order.tsv"
    t = read_tsv(path, numeric=ORDER_NUMERIC, flags=("shuffle",)) if path.exists() else None
    if t is None or t.empty:
        return []
    seeds = sorted(set(t.loc[t["shuffle"], "seed"].astype(int)))
    how = and_list(
        ([f"a random order drawn with seed {and_list(map(str, seeds))}"] if seeds else [])
        + (["sorted order (run_order.shuffle is off)"] if (~t["shuffle"]).any() else [])
    )
    per_host = [
        f"{esc(r.host)}: {plural(int(r.n_runs), 'run')} over {r.span_s / 60:.0f} min, Kendall's τ = "
        f"{r.kendall_tau:.2f}"
        for r in t.itertuples(index=False)
    ]
    return [
        md(
            f"**Run order.** Runs were started in {how} (config `run_order`) over studies, runtimes, run keys "
            "and repetitions, so that the factors interleave and a slow drift of the machine does not line up "
            "with one of them; baselines re-measured for a drift check came after all others. Planned against "
            f"executed order (τ = 1: exactly as planned; runs kept from an earlier invocation keep their "
            f"time; results/stats/run_order.tsv): {'; '.join(per_host)}."
        )
    ]


def blocks(doc) -> list[Block]:
    out = order_block(doc) + [
        doc.table(
            ["", "", "Value"],
            setup_rows(doc.env),
            "Host, engine and config of this run (the papers' factors).",
            group_first=True,
            numeric_from=99,
            table_class="rpt-table rpt-text",
        )
    ]
    rows = image_rows(doc.env)
    if rows:
        out.append(
            doc.table(
                ["Image", "Reference", "Image id", "Built from", "Tool versions"],
                rows,
                "Container images (microservices sharing one container run from one image holding them all). "
                "Ids truncated; full ids in results/stats/environment.json.",
                numeric_from=99,
                table_class="rpt-table rpt-text",
            )
        )
    return out
