"""Config validation: the JSON schema in workflow/schemas/ plus the microservices and
runtimes this checkout declares. Errors name the key and the bad value, in one paragraph."""

from __future__ import annotations

import copy
import json
import os
import socket
from pathlib import Path

import jsonschema
import yaml

from interference import REPO_ROOT
from interference.microservices import registry
from interference.runtimes import ADAPTERS

SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"


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


def full_schema() -> dict:
    """The config schema with one `sizes` entry per declared microservice."""
    schema = yaml.safe_load(SCHEMA_PATH.read_text())
    sizes = schema["properties"]["sizes"]
    sizes["additionalProperties"] = False
    sizes["properties"] = {
        ms.id: {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {
                k: {kk: vv for kk, vv in v.items() if kk != "env"} for k, v in ms.parameters.items()
            },
        }
        for ms in registry().values()
    }
    return schema


def _where(error: jsonschema.ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return path.lstrip(".") or "(top level)"


def validate(config: dict, source: str = "config") -> dict:
    """Return the config with defaults filled in, or raise ConfigError."""
    config = copy.deepcopy(config) if config is not None else {}
    if not isinstance(config, dict):
        raise ConfigError(f"{source}: the config must be a YAML mapping, not {type(config).__name__}.")
    validator = _with_defaults(jsonschema.Draft202012Validator)(full_schema())
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"key {_where(e)} has the bad value {json.dumps(e.instance)}: {e.message}" for e in errors]
        raise ConfigError(f"{source} is invalid, so nothing was built or run. " + "; ".join(lines) + ".")

    known = registry()
    for i, ms in enumerate(config["microservices"]):
        if ms not in known:
            raise ConfigError(
                f"{source} is invalid: key microservices[{i}] has the unknown microservice {ms!r}; "
                f"known: {', '.join(sorted(known))} (each is a containers/<folder>/microservice.yaml)."
            )
    for i, rt in enumerate(config["runtimes"]):
        if rt not in ADAPTERS:
            raise ConfigError(
                f"{source} is invalid: key runtimes[{i}] has the unknown runtime {rt!r}; "
                f"known: {', '.join(sorted(ADAPTERS))} (each is a module in scripts/interference/runtimes/)."
            )
    limits = config["limits"]
    if "3b" in config["cases"] and limits["cpu_mode"] == "cpuset" and 2 * limits["cpus"] > os.cpu_count():
        raise ConfigError(
            f"{source} is invalid: key limits.cpus has the value {limits['cpus']}, but Case 3b pins its two "
            f"containers to disjoint cores and this host has {os.cpu_count()}; use at most "
            f"{os.cpu_count() // 2} or limits.cpu_mode: quota."
        )
    if "B" in config["microservices"]:
        _check_bonnie(config["sizes"]["B"], limits["memory"], source)
    if config["host"] is None:
        config["host"] = socket.gethostname().split(".")[0]
    return config


def memory_mib(text: str) -> float:
    """A docker memory value (512m, 2g, 1073741824) in MiB."""
    scale = {"k": 1 / 1024, "m": 1, "g": 1024}
    unit = text[-1].lower()
    return float(text[:-1]) * scale[unit] if unit in scale else float(text) / 1024**2


def _check_bonnie(sizes: dict, memory: str, source: str) -> None:
    """The papers' rule: Bonnie++'s data set is at least twice the container's memory, so
    the page cache cannot hold it (bonnie++ itself refuses less than twice its -r)."""
    if sizes["file_size_mb"] < 2 * sizes["ram_mb"]:
        raise ConfigError(
            f"{source} is invalid: key sizes.B.file_size_mb has the value {sizes['file_size_mb']}, but "
            f"bonnie++ refuses a data set under twice sizes.B.ram_mb ({sizes['ram_mb']}); "
            f"use at least {2 * sizes['ram_mb']}."
        )
    if sizes["ram_mb"] < memory_mib(memory):
        raise ConfigError(
            f"{source} is invalid: key sizes.B.ram_mb has the value {sizes['ram_mb']}, below limits.memory "
            f"({memory} = {memory_mib(memory):g} MiB): the papers' rule is a Bonnie++ data set of at least "
            f"twice the container's memory; use sizes.B.ram_mb >= {memory_mib(memory):g}."
        )


def load(path: str | Path) -> dict:
    """Read and validate a config file (YAML syntax errors become ConfigError too)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ConfigError(f"{path} is not valid YAML, so nothing was built or run: {e}") from None
    return validate(raw, source=str(path))
