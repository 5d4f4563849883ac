"""The network study's tables: our Tables II (entity and host) and III (nested children), and IV
and V (the same with the server on another host's bare metal, relative to host → remote host),
mean ± SD and the ratio to bare metal's host → host, beside the paper's values."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block
from interference.rendering.kit.format import is_num, num
from interference.studies.network import published
from interference.studies.network.section.data import MODE_NAMES, ends, mode_name


class Tables:
    def _table(self, rows, caption: str, gbit_digits: int = 2) -> list[Block]:
        if rows.empty:
            return []
        cells = []
        for (rt, d, m), g in rows.groupby(["runtime", "direction", "mode"], sort=False):
            g = g.set_index("metric")
            pub = published.VALUES.get((published.entity_of(rt), d, m))
            rel = published.relative(published.entity_of(rt), d, m)
            # Table III's layout for nested pairs: the parent's and the child's mode in columns.
            line = (
                [rt, *(MODE_NAMES[x] for x in m.split("+"))] if "+" in m else [rt, ends(rt, d), mode_name(m)]
            )
            for k, (metric, scale, digits) in enumerate(
                (("throughput", 1e-3, gbit_digits), ("latency", 1, 1))
            ):
                if metric in g.index:
                    r = g.loc[metric]
                    ci = f" [{num(r.ci_low, 2)}, {num(r.ci_high, 2)}]" if is_num(r.ci_low) else ""
                    line += [
                        f"{num(r['mean'] * scale, digits)} ± {num(r.sd * scale, digits)}",
                        f"{num(r.ratio, 2)}{ci}",
                    ]
                else:
                    line += ["–", "–"]
                line.append(f"{pub[2 * k]} ({num(rel[k], 2)})" if pub else "–")
            cells.append(line)
        nested = all("+" in m for m in rows["mode"])
        cols = ["Runtime", "Parent", "Child"] if nested else ["Runtime", "Client → server", "Mode"]
        cols += ["Gbit/s ± σ", "× host", "Paper Gbit/s (×)", "Latency µs ± σ", "× host", "Paper µs (×)"]
        return [self.doc.table(cols, cells, caption, numeric_from=3)]

    def tables(self) -> list[Block]:
        return (
            self._table(
                self._rows(nested=False),
                "Throughput and latency between an entity and its host (our Table II; results/stats/network/"
                f"relative.tsv), × bare metal's host → host, beside {published.SOURCE}.",
            )
            + self._table(
                self._rows(nested=True),
                "Nested children as clients of the host (child → host; our Table III), × bare metal's host → host.",
            )
            + self._table(
                self._rows(nested=False, remote=True),
                "Throughput and latency between an entity and a server on another host's bare metal (our Table IV; "
                f"the remote host: {self.remote_host()}), × bare metal's host → remote host, beside "
                f"{published.REMOTE_SOURCE}.",
                gbit_digits=3,
            )
            + self._table(
                self._rows(nested=True, remote=True),
                "Nested children as clients of a server on another host (child → remote host; our Table V), "
                "× bare metal's host → remote host.",
                gbit_digits=3,
            )
        )

    def remote_host(self) -> str:
        return str((self.cfg or {}).get("remote_host") or "–")
