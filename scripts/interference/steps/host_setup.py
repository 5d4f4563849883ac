"""What a config needs installed on this machine, and what of it is missing.

  python -m interference.steps.host_setup [CONFIG | --tests] [--browser] [--explain | --needs-engine]

Each runtime adapter declares its host packages (`host_packages`; a runtime that converts
another's images needs that runtime's too, and a runtime that builds its own needs debootstrap),
each study its own for a config (`host_packages(cfg)`). Printed: the missing packages' names for
this distribution, on one line (nothing when all are there), which scripts/ensure-engine.sh
installs as root. --explain prints instead one paragraph naming who needs each missing package
and the command that installs them, and exits 1 when something is missing. --needs-engine exits
0 when the config's runtimes need a Docker engine running here. --tests: what `make test` needs
(every runtime, every study as the shipped configs use it, Slurm)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from interference import REPO_ROOT, runtimes, studies
from interference.host import slurm
from interference.host.packages import HostPackage
from interference.steps.config import ConfigError, read_yaml, validate
from interference.steps.images import BUILD_PACKAGES

DEFAULT_CONFIG = REPO_ROOT / "config" / "config.yaml"


def _any_browser() -> bool:
    return any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome"))


BROWSER = HostPackage("chromium", "chromium", "the report test opens the HTML in it", present_if=_any_browser)
# Selenium drives the browser through it (the same version as Debian's chromium: no download).
BROWSER_DRIVER = HostPackage("chromium-driver", "chromedriver", "the report test drives the browser with it")


@dataclass(frozen=True)
class Need:
    who: str  # e.g. "runtime 'lxc'", "study 'network'"
    package: HostPackage


def runtime_chain(name: str) -> list[str]:
    """The runtime and those whose images it is made from (bare metal: host, docker)."""
    chain = [name]
    while source := runtimes.ADAPTERS[chain[-1]].capabilities.image_from:
        chain.append(source)
    return chain


def runtime_needs(name: str) -> list[Need]:
    out = []
    for rt in runtime_chain(name):
        adapter = runtimes.ADAPTERS[rt]
        who = f"runtime {name!r}" + (f" (images from {rt!r})" if rt != name else "")
        out += [Need(who, p) for p in adapter.host_packages]
        if adapter.capabilities.image_from is None:
            out += [Need(who + " image builds", p) for p in BUILD_PACKAGES]
    return out


def needs(config: dict, only_runtimes: set[str] | None = None) -> list[Need]:
    """Every package a validated config needs; `only_runtimes`: the runtimes with runs to do
    (a study whose runs are all done needs nothing more)."""
    out: list[Need] = []
    for name, cfg in config["studies"].items():
        rts = [rt for rt in cfg["runtimes"] if only_runtimes is None or rt in only_runtimes]
        if not rts:
            continue
        for rt in rts:
            out += runtime_needs(rt)
        out += [Need(f"study {name!r}", p) for p in studies.get(name).host_packages(cfg)]
    return out


def test_needs() -> list[Need]:
    """What the test suite runs: every runtime, each study as the shipped configs use it, Slurm."""
    out = [n for rt in runtimes.ADAPTERS for n in runtime_needs(rt)]
    for path in sorted((REPO_ROOT / "config").glob("*.yaml")):
        try:
            cfg = validate(read_yaml(path), str(path), machine=False)
        except ConfigError:
            continue  # a protocol too big for this machine: the tests do not run it
        out += needs(cfg)
    return out + [Need("the Slurm test", p) for p in slurm.PACKAGES]


def missing(wanted: list[Need]) -> list[Need]:
    """The needs whose package is not here, one per package (its first asker)."""
    seen, out = set(), []
    for n in wanted:
        if n.package.debian not in seen:
            seen.add(n.package.debian)
            if not n.package.present():
                out.append(n)
    return out


def distribution() -> str:
    """'ubuntu' on Ubuntu and its derivatives, else 'debian' (the packages' names differ)."""
    try:
        fields = dict(
            line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line
        )
    except OSError:
        return "debian"
    ids = (fields.get("ID", "") + " " + fields.get("ID_LIKE", "")).replace('"', "")
    return "ubuntu" if "ubuntu" in ids.split() else "debian"


def install_command(lacking: list[Need], distro: str | None = None) -> str:
    names = " ".join(n.package.name_on(distro or distribution()) for n in lacking)
    sudo = "" if os.geteuid() == 0 else "sudo "
    return f"{sudo}apt-get install {names}"


def explain(lacking: list[Need], what: str, distro: str | None = None) -> str:
    """One paragraph: what is missing, who needs it, and the command that installs it."""
    distro = distro or distribution()
    by = "; ".join(f"{n.package.name_on(distro)} ({n.package.why}) for {n.who}" for n in lacking)
    return (
        f"{what} needs packages that are not installed here: {by}. Install them with "
        f"`{install_command(lacking, distro)}` (or, as root, `make engine CONFIG=<config>`, which does it), "
        "or leave the runtime or study that needs them out of the config."
    )


def needs_engine(config: dict) -> bool:
    """A Docker engine must run here: a runtime of the config is Docker or made from its images."""
    return any("docker" in runtime_chain(rt) for cfg in config["studies"].values() for rt in cfg["runtimes"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", nargs="?", type=Path, default=DEFAULT_CONFIG)
    ap.add_argument("--tests", action="store_true", help="what the test suite needs")
    ap.add_argument("--browser", action="store_true", help="also a browser (the report test)")
    ap.add_argument("--budget", type=float, help="the config's budget_min (make paper BUDGET=...)")
    ap.add_argument("--base", action="store_true",
                    help="the config's own studies only, without its findings or budget (make paper's calibration)")  # fmt: skip
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--explain", action="store_true")
    mode.add_argument("--needs-engine", action="store_true")
    a = ap.parse_args(argv)
    try:
        raw = None if a.tests else read_yaml(a.config)
        if a.budget is not None:
            raw["budget_min"] = a.budget
        if a.base:  # no plan is made: a plan priced before the host's first runs is not cached
            raw = {**raw, "findings": [], "budget_min": None}
        config = None if a.tests else validate(raw, str(a.config), machine=False)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.needs_engine:
        return 0 if a.tests or needs_engine(config) else 1
    wanted = test_needs() if a.tests else needs(config)
    if a.browser:
        wanted += [Need("the report test", BROWSER), Need("the report test", BROWSER_DRIVER)]
    lacking = missing(wanted)
    if a.explain:
        if lacking:
            print(
                explain(lacking, "The test suite" if a.tests else f"The config {a.config}"), file=sys.stderr
            )
            return 1
        return 0
    print(" ".join(n.package.name_on(distribution()) for n in lacking))
    return 0


if __name__ == "__main__":
    sys.exit(main())
