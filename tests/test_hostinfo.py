"""A confined host (a container with its own engine, a cpuset) reports what it can use."""

from interference.host.info import cgroup_memory_limit


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_v1_memory_limit_of_own_cgroup(tmp_path):
    _write(tmp_path / "memory/edge/inner/memory.limit_in_bytes", "4294967296\n")
    proc = "12:cpuset:/edge/inner\n4:memory:/edge/inner\n1:name=systemd:/\n"
    assert cgroup_memory_limit(proc, tmp_path) == 4294967296


def test_v1_a_parents_limit_binds_an_unlimited_child(tmp_path):
    # A container of an engine that runs in a limited container: the limit is two levels up.
    _write(tmp_path / "memory/edge/memory.limit_in_bytes", "4294967296\n")
    _write(tmp_path / "memory/edge/abc/memory.limit_in_bytes", "9223372036854771712\n")
    _write(tmp_path / "memory/edge/abc/inner/memory.limit_in_bytes", "9223372036854771712\n")
    assert cgroup_memory_limit("4:memory:/edge/abc/inner\n", tmp_path) == 4294967296


def test_v1_unlimited_is_none(tmp_path):
    _write(tmp_path / "memory/memory.limit_in_bytes", "9223372036854771712\n")
    assert cgroup_memory_limit("4:memory:/\n", tmp_path) is None


def test_v2_memory_max(tmp_path):
    _write(tmp_path / "edge/memory.max", "1073741824\n")
    assert cgroup_memory_limit("0::/edge\n", tmp_path) == 1073741824
    assert cgroup_memory_limit("0::/edge/child\n", tmp_path) == 1073741824
    _write(tmp_path / "edge/memory.max", "max\n")
    assert cgroup_memory_limit("0::/edge\n", tmp_path) is None


def test_unreadable_cgroup_is_none(tmp_path):
    assert cgroup_memory_limit("4:memory:/gone\n", tmp_path) is None
