"""Config validation: the top-level JSON schema in workflow/schemas/, each study's schema
(its module), each runtime's options (its adapter), and whether every runtime a study runs on
has the capabilities it needs. Errors name the key and the bad value, in one paragraph."""

from __future__ import annotations

import copy
import json
import socket
from collections.abc import Callable
from pathlib import Path

import jsonschema
import yaml

from interference import REPO_ROOT, runtimes, studies
from interference.core.runtime_names import RENAMED
from interference.core.yaml_files import load_once

SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"
NOTHING_RAN = "so nothing was built or run"
# Top-level keys of configs written before studies were plug-ins.


class ConfigError(ValueError):
    """A config that must not start any build or run."""


def _with_defaults(cls):
    # jsonschema's documented recipe: fill "default" before validating each property.
    validate_properties = cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(cls, {"properties": set_defaults})


FILLING_VALIDATOR = _with_defaults(jsonschema.Draft202012Validator)  # made once: a class per check is slow


def _where(prefix: str, error: jsonschema.ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return (prefix + path).lstrip(".") or "(top level)"


def _check(instance: dict, schema: dict, prefix: str, source: str) -> None:
    """Validate in place (defaults filled in) or raise ConfigError naming every bad key."""
    validator = FILLING_VALIDATOR(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [
            f"at key {_where(prefix, e)}: {e.message}"
            if isinstance(e.instance, dict)  # the whole mapping would drown the message
            else f"key {_where(prefix, e)} has the bad value {json.dumps(e.instance)}: {e.message}"
            for e in errors
        ]
        if not prefix:
            lines += _misplaced(instance, schema)
        raise ConfigError(f"{source} is invalid, {NOTHING_RAN}. " + "; ".join(lines) + ".")


def _misplaced(instance: dict, schema: dict) -> list[str]:
    """Top-level keys that are a study's (e.g. microservices, cases): where they belong."""
    stray = set(instance) - set(schema.get("properties", {}))
    out = []
    for name, study in studies.registry().items():
        if mine := sorted(stray & set(study.config_schema().get("properties", {}))):
            out.append(f"the keys {', '.join(mine)} are the {name} study's: they belong under studies.{name}")
    return out


def _known(kind: str, name: str, where: str, known, home: str, source: str) -> None:
    if name not in known:
        raise ConfigError(
            f"{source} is invalid, {NOTHING_RAN}: key {where} names the unknown {kind} {name!r}; "
            f"known: {', '.join(sorted(known))} (each is {home})."
        )


RUNTIME_HOME = "a module in scripts/interference/runtimes/"


def _check_runtime(config: dict, rt: str, where: str, source: str) -> None:
    """A runtime named at `where` is known; its options are valid, with defaults filled in."""
    if rt in RENAMED:
        raise ConfigError(
            f"{source} is invalid, {NOTHING_RAN}: key {where} names the runtime {rt!r}, which is now called "
            f"{RENAMED[rt]!r}; write that instead (results of earlier {rt!r} runs are kept, under "
            f"{RENAMED[rt]}/)."
        )
    _known("runtime", rt, where, runtimes.ADAPTERS, RUNTIME_HOME, source)
    options = config["runtime_options"].setdefault(rt, {})
    _check(options, runtimes.ADAPTERS[rt].options_schema, f"runtime_options.{rt}", source)


def study_schema(study) -> dict:
    schema = copy.deepcopy(study.config_schema())
    schema.setdefault("properties", {})["runtimes"] = {
        "type": "array",
        "minItems": 1,
        "uniqueItems": True,
        "items": {"type": "string"},
        "description": "The runtimes this study runs on (default: the top-level runtimes).",
    }
    return schema


def validate(config: dict, source: str = "config", machine: bool = True) -> dict:
    """Return the config with defaults filled in, or raise ConfigError. `machine`: also check
    this machine for what the studies need beyond their packages (steps/host_setup.py asks without,
    to install the packages first)."""
    config = copy.deepcopy(config) if config is not None else {}
    if not isinstance(config, dict):
        raise ConfigError(f"{source}: the config must be a YAML mapping, not {type(config).__name__}.")
    _check(config, load_once(SCHEMA_PATH), "", source)
    if config["host"] is None:
        config["host"] = socket.gethostname().split(".")[0]
    if config["include"]:
        config = _with_includes(config, source)
    if config["findings"] and not config["findings_plan"]:
        config = _with_findings(config, source)
    if not config["studies"]:
        raise ConfigError(
            f"{source} is invalid, {NOTHING_RAN}: it names no study to run (`studies:`, or `findings:` "
            "whose runs the plan derives)."
        )
    config["run_on"] = config["run_on"] or [config["host"]]
    # Per-host protocol (paper 004: smaller sizes on the Pi): this host's overrides, merged into
    # its studies; every other host's are checked as that host would read them.
    per_host = config.pop("hosts")
    for host in per_host:
        if host != config["host"]:
            validate(
                config | {"host": host, "hosts": {host: per_host[host]}},
                f"{source} (as host {host})",
                machine,
            )
    for name, part in per_host.get(config["host"], {}).get("studies", {}).items():
        if name not in config["studies"]:
            raise ConfigError(
                f"{source} is invalid, {NOTHING_RAN}: hosts.{config['host']}.studies.{name} overrides a "
                f"study the config does not run ({', '.join(config['studies'])})."
            )
        config["studies"][name] = _merged(config["studies"][name], part)

    for i, path in enumerate(config["compare_with"]):
        if machine and not Path(path).is_file():
            raise ConfigError(
                f"{source} is invalid, {NOTHING_RAN}: compare_with[{i}] names {path!r}, which is no file here "
                "(save one with `make save NAME=...`: sessions/NAME.tar.gz)."
            )
    for rt in list(config["runtime_options"]):
        _check_runtime(config, rt, f"runtime_options.{rt}", source)
    for i, rt in enumerate(config["runtimes"]):
        _check_runtime(config, rt, f"runtimes[{i}]", source)

    known = studies.registry()
    for name, cfg in config["studies"].items():
        _known("study", name, f"studies.{name}", known, "a module in scripts/interference/studies/", source)
        study = known[name]
        _check(cfg, study_schema(study), f"studies.{name}", source)
        cfg.setdefault("runtimes", list(config["runtimes"]))
        for i, rt in enumerate(cfg["runtimes"]):
            _check_runtime(config, rt, f"studies.{name}.runtimes[{i}]", source)
        try:
            study.check(cfg)
            if machine:
                study.check_machine(cfg)
        except studies.StudyConfigError as e:
            raise ConfigError(f"{source} is invalid, {NOTHING_RAN}: {e}.") from None
        needed = study.needs(cfg)
        for rt in cfg["runtimes"]:
            lacking = runtimes.ADAPTERS[rt].capabilities.lacks(needed)
            if lacking:
                words = ", ".join(runtimes.CAPABILITY_WORDS.get(n, n) for n in lacking)
                raise ConfigError(
                    f"{source} is invalid, {NOTHING_RAN}: the study {name!r} needs {words} with this config, "
                    f"which the runtime {rt!r} does not have. Remove {rt!r} from studies.{name}.runtimes "
                    f"(or from runtimes), or change the study so it does not need it."
                )
    return config


def measured_runs(workdir: Path) -> Callable[[dict], bool]:
    """Whether a run is on disk already with the settings it would run with (its meta.json,
    studies.RUN_META under workdir, holds them): snakemake will not run it again, so it costs a
    plan nothing."""
    seen: dict[Path, dict | None] = {}

    def done(s: dict) -> bool:
        path = workdir / studies.RUN_META.format(
            host=s["host"], runtime=s["runtime"], study=s["study"], key=s["key"], rep=s["repetition"]
        )
        if path not in seen:
            try:
                seen[path] = json.loads(path.read_text()).get("settings")
            except (OSError, ValueError, AttributeError):
                seen[path] = None
        return seen[path] == s

    return done


def model_seconds(config: dict, scale: float = 1.0, done: Callable[[dict], bool] | None = None) -> float:
    """A config's runs by the studies' models, parsing included (a run without a model counts
    estimate.NO_MODEL_S), each model's part beyond its wall-clock time scaled by `scale`. A run
    `done` says is measured costs nothing, unless it runs again after every other (a drift
    check's baseline: Study.after_all)."""
    from interference.steps import estimate

    # A study part that is not complete yet (the config's `how` before a finding adds its
    # microservices) has no runs to count.
    known, parts = studies.registry(), {}
    for name, part in (config.get("studies") or {}).items():
        try:
            _check(copy.deepcopy(part), study_schema(known[name]), f"studies.{name}", "the plan")
            parts[name] = part
        except (ConfigError, KeyError):
            continue
    if not parts:
        return 0.0
    cfg = validate({**config, "studies": parts}, "the plan", machine=False)
    total = 0.0
    for name, part in cfg["studies"].items():
        study = studies.get(name)
        for rt in part["runtimes"]:
            for r in study.runs_on(part, rt):
                settings = {"host": cfg["host"], **studies.run_settings(cfg, name, rt, r.key, r.repetition)}
                if done and not study.after_all(r.key) and done(settings):
                    continue
                s = study.expected_seconds(settings)
                if s is None:
                    s = estimate.NO_MODEL_S * scale
                else:
                    fixed = study.fixed_seconds(settings)
                    s = fixed + (s - fixed) * scale
                total += s + estimate.PARSE_PER_RUN_S + estimate.AFTER_PER_RUN_S
    return total


def _with_includes(config: dict, source: str) -> dict:
    """The config with the studies of the configs it includes united into its own (lists
    joined, other keys kept where it has them: findings/plan.merged)."""
    from interference.steps import plan

    needs = []
    for name in config["include"]:
        path = next((p for p in (Path(name), REPO_ROOT / name) if p.is_file()), None)
        if path is None:
            raise ConfigError(
                f"{source} is invalid, {NOTHING_RAN}: include names {name!r}, which is no file here."
            )
        try:
            other = read_yaml(path) or {}
        except Exception as e:  # a file that is not YAML at all: named, not a traceback
            raise ConfigError(
                f"{source} is invalid, {NOTHING_RAN}: include names {name}, which is no YAML: {e}"
            ) from e
        if not isinstance(other, dict) or not isinstance(other.get("studies", {}), dict):
            raise ConfigError(
                f"{source} is invalid, {NOTHING_RAN}: include names {name}, which is no config "
                "(a mapping with studies: and runtimes:)."
            )
        if other.get("include"):
            raise ConfigError(
                f"{source} is invalid, {NOTHING_RAN}: {name} includes others; include only plain configs."
            )
        top = list(other.get("runtimes") or ["docker"])
        for study, part in (other.get("studies") or {}).items():
            part = {"runtimes": top, **part}
            needs.append(plan.Need(study, part))
    out = plan.merged({k: v for k, v in config.items() if k != "include"}, needs)
    out["include"] = []  # united: validating the result again includes nothing twice
    _check(out, load_once(SCHEMA_PATH), "", source)
    return out


def _with_findings(config: dict, source: str) -> dict:
    """The config with the runs of its findings added (steps/plan.py), planned within its
    budget on this host (the models scaled to the host once: estimate.host_scale)."""
    from interference.steps import estimate, plan, verdict_price

    budget = config["budget_min"] is not None
    scale = estimate.host_scale(Path("results"), config["host"]) if budget else estimate.Scale()
    done = measured_runs(Path("."))  # read once for every cost the plan weighs
    try:
        out = plan.expand(
            config,
            # A run on disk with the same settings costs nothing: a bigger budget after a first
            # pass keeps what was measured and spends the minutes on what was not.
            lambda c: model_seconds(c, scale.factor, done),
            Path("results") / "plan" if budget else None,
            scale_said=estimate.scale_words(scale) if budget else None,
            noise=verdict_price.noise(
                Path("results"), config["host"], (config.get("runtimes") or ["docker"])[0]
            )
            if budget
            else None,
        )
    except plan.PlanError as e:
        raise ConfigError(f"{source} is invalid, {NOTHING_RAN}: {e}.") from None
    _check(out, load_once(SCHEMA_PATH), "", source)
    return out


def host_configs(config: dict, source: str = "config") -> tuple[dict, dict[str, dict]]:
    """The config as `host` reads it (checked with this machine), and the config of each host of
    run_on (its hosts.<host> overrides applied; the others checked as they would read it)."""
    own = validate(config, source)
    return own, {
        h: own
        if h == own["host"]
        else validate({**(config or {}), "host": h}, f"{source} (as host {h})", machine=False)
        for h in own["run_on"]
    }


def _merged(base: dict, override: dict) -> dict:
    """base with override's keys replaced, mappings merged key by key."""
    out = dict(base)
    for k, v in override.items():
        out[k] = _merged(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def read_yaml(path: str | Path):
    """A config file's YAML; a syntax error names the file, line and column."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        raise ConfigError(f"{where}: not valid YAML ({e.problem or e.context}), {NOTHING_RAN}.") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({e}), {NOTHING_RAN}.") from None


def load(path: str | Path) -> dict:
    """Read and validate a config file."""
    return validate(read_yaml(path), source=str(path))


def main(argv=None) -> int:
    """python -m interference.steps.config FILE...: check config files before handing them to snakemake."""
    import sys

    status = 0
    for path in argv if argv is not None else sys.argv[1:]:
        try:
            cfg = load(path)
            print(f"{path}: valid; studies {', '.join(cfg['studies'])} on {', '.join(cfg['runtimes'])}")
        except (ConfigError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    raise SystemExit(main())
