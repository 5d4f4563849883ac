"""Image records per host (results/images/<host>/<runtime>/<image>.json) and the move of the
older layout's records under their host; the config's run_on, each host with its own config."""

import os

from interference.steps.config import host_configs
from interference.stores import image_records


def test_old_records_move_under_the_host_with_their_times(tmp_path):
    images = tmp_path / "results/images"
    for runtime, name in (("docker", "base"), ("docker", "L"), ("vm", "L")):
        (images / runtime).mkdir(parents=True, exist_ok=True)
        (images / runtime / f"{name}.json").write_text(f'{{"image": "{name}"}}')
        os.utime(images / runtime / f"{name}.json", (1000, 1000))
    # A host named like a runtime ("vm"): its folder holds runtimes, not records.
    moved = image_records.migrate(images, "vm", ["docker", "podman", "vm"])
    assert sorted(str(p.relative_to(images)) for p in moved) == [
        "vm/docker/L.json",
        "vm/docker/base.json",
        "vm/vm/L.json",
    ]
    assert sorted(str(p.relative_to(images)) for p in images.rglob("*.json")) == [
        "vm/docker/L.json",
        "vm/docker/base.json",
        "vm/vm/L.json",
    ]
    assert {p.stat().st_mtime for p in images.rglob("*.json")} == {1000}
    assert image_records.migrate(images, "vm", ["docker", "vm"]) == []  # the new layout stays


def test_a_record_the_host_has_is_kept_and_the_old_one_left(tmp_path):
    images = tmp_path / "images"
    (images / "docker").mkdir(parents=True)
    (images / "h/docker").mkdir(parents=True)
    (images / "docker/L.json").write_text("old")
    (images / "h/docker/L.json").write_text("new")
    assert image_records.migrate(images, "h", ["docker"]) == []
    assert (images / "h/docker/L.json").read_text() == "new" and (images / "docker/L.json").exists()


def test_run_on_gives_each_host_its_own_config():
    raw = {
        "host": "fog",
        "run_on": ["fog", "edge"],
        "studies": {
            "pairs": {"microservices": ["S"], "cases": ["1"], "sizes": {"S": {"array_elements": 4000000}}}
        },
        "hosts": {"edge": {"studies": {"pairs": {"sizes": {"S": {"array_elements": 2000000}}}}}},
    }
    own, per_host = host_configs(raw)
    assert own["run_on"] == ["fog", "edge"] and list(per_host) == ["fog", "edge"]
    assert per_host["fog"] is own
    assert per_host["edge"]["host"] == "edge"
    sizes = {h: c["studies"]["pairs"]["sizes"]["S"]["array_elements"] for h, c in per_host.items()}
    assert sizes == {"fog": 4000000, "edge": 2000000}
    alone, hosts = host_configs({"host": "fog", "studies": raw["studies"]})
    assert alone["run_on"] == ["fog"] and list(hosts) == ["fog"]
