"""Runtimes that changed their name: old -> new. A config naming an old one is refused with the
new name (steps/config.py); a results tree's runs and records under the old name are moved under
the new one (stores/renamed_runtimes.py), and saved sessions are read with the new name."""

RENAMED = {"host": "baremetal"}  # 2026-11-28: "host" also named the machine every run is on


def renamed(name: str) -> str:
    return RENAMED.get(name, name)


def renamed_config(config):
    """A config (or any part of one) with every `runtimes` list and `runtime_options` key renamed
    (nothing else: `host` is also the machine's key): how a saved session's definition reads
    against today's."""
    if isinstance(config, list):
        return [renamed_config(v) for v in config]
    if not isinstance(config, dict):
        return config
    out = {}
    for key, value in config.items():
        if key == "runtimes" and isinstance(value, list):
            value = [renamed(v) if isinstance(v, str) else v for v in value]
        elif key == "runtime_options" and isinstance(value, dict):
            value = {renamed(k): renamed_config(v) for k, v in value.items()}
        else:
            value = renamed_config(value)
        out[key] = value
    return out
