"""The pair study's section of the paper (studies/pairs/section.qmd calls it). PairsSection composes
one part per module, each a plain class given the one PairsData (quality also gets the page_cache
part, whose evidence it lists); section.qmd calls the parts, e.g. `pairs.results.results_blocks()`.

  data          PairsData: the tables of results/stats/pairs/ and the naming (targets, metrics, cases)
  method        CEEM steps, microservices and tools, placement cases and limits, runs
  results       the papers' tables per microservice, bars of means, IR bars, IR heat map
  runtimes      Case 1 baselines per runtime, relative to bare metal (or docker)
  hosts         every case on each host relative to the first host, host × case ANOVA
  contention    pressure, throttling and memory failures per case; performance against CPU pressure
  significance  ANOVA and Tukey HSD with their generated sentences
  comparison    the published values beside ours (results/stats/pairs/published.tsv)
  quality       samples left out, failures, variation, notes, drift, limits read back
  page_cache    Bonnie++ in the unlimited cases: the page cache behind its "gains"
  split         each Case 2/3a IR as the limit's effect (1u against 1) and the partner's

No number of the report is typed in: the only constants are the thresholds of the verdicts
(data.CV_FLAG, statistics.ALPHA, data.ETA_BANDS, published.NEGLIGIBLE_IR and SIMILAR_FACTOR), which
the text states."""

from __future__ import annotations

from interference.rendering.kit.blocks import Block, md
from interference.rendering.kit.format import and_list, esc, pct, plural
from interference.rendering.kit.format import signed as ir_str
from interference.studies.pairs.section.comparison import Comparison
from interference.studies.pairs.section.contention import Contention
from interference.studies.pairs.section.data import CASE_NAME, PairsData
from interference.studies.pairs.section.hosts import Hosts
from interference.studies.pairs.section.method import Method
from interference.studies.pairs.section.page_cache import PageCache
from interference.studies.pairs.section.quality import Quality
from interference.studies.pairs.section.results import Results
from interference.studies.pairs.section.runtimes import Runtimes
from interference.studies.pairs.section.significance import Significance
from interference.studies.pairs.section.split import Split


class PairsSection:
    """Every part of the pair study's section, over one PairsData from the Document's stats folder."""

    def __init__(self, doc):
        self.data = PairsData(doc)
        self.method = Method(self.data)
        self.results = Results(self.data)
        self.split = Split(self.data)
        self.runtimes = Runtimes(self.data)
        self.hosts = Hosts(self.data)
        self.contention = Contention(self.data)
        self.significance = Significance(self.data)
        self.comparison = Comparison(self.data)
        self.page_cache = PageCache(self.data)
        self.quality = Quality(self.data, self.page_cache)

    def abstract(self) -> list[Block]:
        data = self.data
        s = data.summary
        n_runs = len(data.runs) if len(data.runs) else data.env.get("n_runs", 0)
        names = and_list(f"{data.name(t)} ({t})" for t in data.targets())
        cases = [c for c in CASE_NAME if c in set(s["case"])]
        blocks = [
            md(
                f"The pair study: {plural(n_runs, 'run')} of {names} in {and_list(CASE_NAME[c] for c in cases)} gave "
                f"{int(s['n'].sum())} samples in {len(s)} case × target × partner × metric groups."
            )
        ]
        fid = data.fidelity
        if len(fid):
            n, agree = int(fid["pairings"].sum()), int(fid["agree"].sum())
            per = and_list(
                f"paper {r.paper}: {r.agree} of {r.pairings}, {pct(r.share, 0, sign=False)} "
                f"[{pct(r.ci_low, 0, sign=False)}, {pct(r.ci_high, 0, sign=False)}]"
                for r in fid.itertuples(index=False)
            )
            blocks.append(
                md(
                    f"Of the papers' {plural(n, 'published pairing')} measured here, **{agree} "
                    f"({pct(agree / n, 0, sign=False)}) have the same direction on this machine** ({per}; a "
                    f"{esc(fid['rule'].iloc[0])}; see *Comparison with the published results*)."
                )
            )
        else:
            blocks.append(
                md(
                    "No published interference ratio is of a pairing measured here, so this report's results "
                    "stand alone."
                )
            )
        worst = data.ir.dropna(subset=["ir"]).sort_values("ir").head(1)
        if len(worst):
            w = worst.iloc[0]
            blocks.append(
                md(
                    f"The strongest interference measured here is {CASE_NAME[w['case']]} "
                    f"{data.label(w['target'], w['partner'])} on {data.metric_title(w['target'], w['metric'])}: "
                    f"IR = {ir_str(w['ir'])} ({pct(w['ir'])} against the baseline)."
                )
            )
        return blocks


def section(doc) -> PairsSection:
    """The section object of this document (made once: its cells share it)."""
    if not hasattr(doc, "_pairs"):
        doc._pairs = PairsSection(doc)
    return doc._pairs


def abstract(doc) -> list[Block]:
    """The paper's abstract for this study (Document.abstract asks every study's section module)."""
    return section(doc).abstract()
