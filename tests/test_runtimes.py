"""The runtime adapters' command lines and cgroup plans, without running anything: Podman's
flags for a machine without systemd and CAP_SYS_RESOURCE, bare metal's chroot script and the
cgroup files it writes on v1 and v2, LXC's configuration, the nested parent's flags, a VM's
shape and qemu command line, Apptainer's argv."""

from pathlib import Path

import pytest
from interference.host import cgroups
from interference.runtimes import ContainerSpec, RuntimeUnavailable
from interference.runtimes.baremetal import BareMetalRuntime
from interference.runtimes.docker import DockerRuntime
from interference.runtimes.lxc import LxcRuntime, cgroup_keys
from interference.runtimes.nested import NestedRuntime
from interference.runtimes.nested_parent import parent_flags
from interference.runtimes.podman import PodmanRuntime
from interference.runtimes.vm import VmRuntime
from interference.runtimes.vm_lifecycle import guest_shape

SPEC = ContainerSpec(
    name="interference-abc-0001",
    image="IMG",
    command=["microservice-loop", "L", "/results/m", "1", "0", "count", "1", "60"],
    env={"LINPACK_N": "800"},
    cpuset="0",
    memory="1g",
    binds=[("/tmp/out", "/results")],
    volumes=[("interference-abc-0001-scratch-b", "/scratch")],
    labels={"interference.run": "abc"},
)


def test_docker_argv():
    argv = DockerRuntime().run_argv(SPEC)
    assert argv[:3] == ["docker", "run", "--detach"]
    assert argv[argv.index("--cpuset-cpus") + 1] == "0" and argv[argv.index("--memory-swap") + 1] == "1g"
    assert argv[-9:] == ["IMG", *SPEC.command]


def test_podman_argv_works_without_systemd_and_cap_sys_resource():
    rt = PodmanRuntime()
    argv = rt.run_argv(SPEC)
    assert argv[:5] == ["podman", "--cgroup-manager", "cgroupfs", "--events-backend", "file"]
    assert argv[5:7] == ["run", "--detach"]
    ulimits = [argv[i + 1] for i, a in enumerate(argv) if a == "--ulimit"]
    assert [u.split("=")[0] for u in ulimits] == ["nofile", "nproc"]
    assert int(ulimits[1].split(":")[1]) <= 32768  # never above what podman's processes may have
    assert "--log-driver" in argv and argv[-9:] == ["IMG", *SPEC.command]
    assert rt.build_args == rt.run_args[:4]  # builds get the same limits


def test_podman_options_change_the_flags():
    rt = PodmanRuntime(cgroup_manager="systemd", ulimit_host=False)
    argv = rt.run_argv(SPEC)
    assert argv[2] == "systemd" and "--ulimit" not in argv


def test_host_script_chroots_with_private_mounts():
    rt = BareMetalRuntime(rootfs_dir="/r", state_dir="/s")
    spec = ContainerSpec(**{**SPEC.__dict__, "image": "rootfs:/r/interference_l_x"})
    argv = rt.run_argv(spec)
    assert argv[:5] == ["unshare", "--mount", "--propagation", "private", "--"]
    script = argv[-1]
    assert "mount --bind /tmp/out /r/interference_l_x/results" in script
    assert "mount --bind /s/volumes/interference-abc-0001-scratch-b /r/interference_l_x/scratch" in script
    assert script.splitlines()[-1].startswith("exec chroot /r/interference_l_x env -i PATH=")
    assert "LINPACK_N=800 microservice-loop L /results/m" in script


def test_cgroup_plan_v1():
    plan = cgroups.plan("x", "1", None, "512m", 1)
    assert plan[Path("/sys/fs/cgroup/cpuset/interference/x")] == {"cpuset.cpus": "1", "cpuset.mems": None}
    assert plan[Path("/sys/fs/cgroup/cpu/interference/x")] == {}
    assert plan[Path("/sys/fs/cgroup/memory/interference/x")] == {
        "memory.limit_in_bytes": str(512 * 1024**2),
        "memory.memsw.limit_in_bytes": str(512 * 1024**2),
    }
    assert cgroups.plan("x", None, 1.5, None, 1)[Path("/sys/fs/cgroup/cpu/interference/x")] == {
        "cpu.cfs_period_us": "100000",
        "cpu.cfs_quota_us": "150000",
    }


def test_cgroup_plan_v2():
    plan = cgroups.plan("x", "0-1", 2, "1g", 2)
    assert plan == {
        Path("/sys/fs/cgroup/interference/x"): {
            "cpuset.cpus": "0-1",
            "cpu.max": "200000 100000",
            "memory.max": str(1024**3),
            "memory.swap.max": "0",
        }
    }


@pytest.mark.parametrize(
    "text, value", [("512m", 512 * 1024**2), ("2g", 2 * 1024**3), ("1073741824", 1024**3)]
)
def test_memory_notation(text, value):
    assert cgroups.memory_bytes(text) == value


def test_host_refuses_without_root(monkeypatch):
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    from interference.runtimes import RuntimeUnavailable

    with pytest.raises(RuntimeUnavailable, match=r"needs root"):
        BareMetalRuntime().check()


def test_apptainer_argv():
    from interference.runtimes.apptainer import ApptainerRuntime

    rt = ApptainerRuntime(state_dir="/s")
    spec = ContainerSpec(**{**SPEC.__dict__, "image": "sif:/i/l.sif"})
    argv = rt.run_argv(spec)
    assert argv[:5] == ["apptainer", "exec", "--containall", "--cleanenv", "--writable-tmpfs"]
    assert argv[argv.index("--cpuset-cpus") + 1] == "0"
    assert argv[argv.index("--memory") + 1] == "1g" and argv[argv.index("--memory-swap") + 1] == "1g"
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert binds == ["/tmp/out:/results", "/s/volumes/interference-abc-0001-scratch-b:/scratch"]
    assert "LINPACK_N=800" in argv and argv[-9:] == ["/i/l.sif", *SPEC.command]
    assert not ApptainerRuntime.capabilities.networks and ApptainerRuntime.capabilities.image_from == "docker"


def test_apptainer_is_refused_where_it_is_not_installed(monkeypatch):
    from interference.runtimes import RuntimeUnavailable, apptainer
    from interference.runtimes.apptainer import ApptainerRuntime

    # Absent whatever this machine has (GitHub Actions installs it): the refusal is tested everywhere.
    monkeypatch.setattr(apptainer.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeUnavailable, match="Apptainer is not installed") as e:
        ApptainerRuntime().check()
    assert "setup-apptainer" in str(e.value)


def test_lxc_config_has_the_limits_mounts_and_network_of_the_spec(tmp_path):
    rt = LxcRuntime(state_dir=str(tmp_path))
    rt.bridges.dir.mkdir(parents=True)
    (rt.bridges.dir / "net1.json").write_text(
        '{"labels": {}, "bridge": "itf0123456789", "subnet": "10.231.7.0/24", "members": {}}'
    )
    spec = ContainerSpec(**{**SPEC.__dict__, "image": "rootfs:/r/l", "network": "net1"})
    lines = rt._config_lines(spec)
    assert f"lxc.rootfs.path = overlay:/r/l:{tmp_path}/lxc/{spec.name}/upper" in lines
    assert "lxc.mount.entry = /tmp/out results none bind,create=dir 0 0" in lines
    assert "lxc.net.0.ipv4.address = 10.231.7.2/24" in lines and "lxc.net.0.link = itf0123456789" in lines
    assert "lxc.environment = LINPACK_N=800" in lines
    assert rt.run_argv(spec)[:5] == ["lxc-execute", "-n", spec.name, "-P", f"{tmp_path}/lxc"]


@pytest.mark.parametrize("version", [1, 2])
def test_lxc_limits_are_the_cgroup_files_of_the_host_version(version):
    keys = dict(cgroup_keys(ContainerSpec(**{**SPEC.__dict__, "cpus": 1.5}), version))
    if version == 1:
        assert keys["lxc.cgroup.cpuset.cpus"] == "0"
        assert keys["lxc.cgroup.cpu.cfs_quota_us"] == "150000"
        assert keys["lxc.cgroup.memory.limit_in_bytes"] == str(1024**3)
    else:
        assert keys == {
            "lxc.cgroup2.cpuset.cpus": "0",
            "lxc.cgroup2.cpu.max": "150000 100000",
            "lxc.cgroup2.memory.max": str(1024**3),
            "lxc.cgroup2.memory.swap.max": "0",
        }


def test_nested_parent_flags_are_what_worked_here_and_preloaded_needs_vfs():
    flags = parent_flags()
    assert "--privileged" not in flags
    assert flags[flags.index("--cap-drop") + 1] == "SYS_RESOURCE" and "--cgroupns" in flags
    assert "/sys/fs/cgroup:/sys/fs/cgroup:rw" in flags
    with pytest.raises(RuntimeUnavailable, match="preloaded needs storage_driver vfs"):
        NestedRuntime(child_image="preloaded", storage_driver="overlay2").check()


@pytest.mark.parametrize(
    ("limits", "shape"),
    [
        ({"cpuset": "0"}, (1, 1024)),
        ({"cpuset": "0-1"}, (2, 1024)),
        ({"cpus": 1.5, "cpuset": None}, (2, 1024)),
    ],
)
def test_a_vms_shape_comes_from_the_limits(limits, shape):
    assert guest_shape(ContainerSpec(**{**SPEC.__dict__, **limits}), "2g") == shape


def test_vm_argv_shares_results_and_attaches_volumes(tmp_path):
    rt = VmRuntime(state_dir=str(tmp_path), kernel="/boot/vmlinuz-6.1.0-9-amd64", accel="tcg")
    argv = rt.run_argv(ContainerSpec(**{**SPEC.__dict__, "image": "vmdisk:/d/l.img"}))
    assert argv[:5] == ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max"]
    assert argv[argv.index("-smp") + 1] == "1" and argv[argv.index("-m") + 1] == "1024M"
    assert "file=/d/l.img,if=virtio,format=raw,snapshot=on" in argv
    assert "local,path=/tmp/out,mount_tag=b0,security_model=none" in argv
    assert f"file={tmp_path}/volumes/interference-abc-0001-scratch-b/disk.img,if=virtio,format=raw" in argv


def test_each_vm_on_a_network_has_a_mac_of_its_own(tmp_path):
    rt = VmRuntime(state_dir=str(tmp_path), kernel="/boot/vmlinuz-6.1.0-9-amd64", accel="tcg")
    macs = set()
    for name in ("interference-abc-server1", "interference-abc-member1"):
        argv = rt.run_argv(
            ContainerSpec(**{**SPEC.__dict__, "name": name, "image": "vmdisk:/d", "network": "n"})
        )
        macs.add(next(a for a in argv if a.startswith("virtio-net-pci")).split("mac=")[1])
    assert len(macs) == 2 and all(m.startswith("52:54:00:") for m in macs)


def test_vm_is_refused_with_what_is_missing(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(RuntimeUnavailable, match="qemu-system-x86_64.*apt-get install qemu-system-x86"):
        VmRuntime(kernel="/nonexistent/vmlinuz-1").check()


@pytest.mark.parametrize(
    ("mode", "flag"), [("host", "host"), ("bridge", "bridge"), ("ovs", "none"), ("none", "none")]
)
def test_network_modes_of_docker_and_podman(mode, flag):
    spec = ContainerSpec(**{**SPEC.__dict__, "network_mode": mode})
    for rt in (DockerRuntime(), PodmanRuntime()):
        argv = rt.run_argv(spec)
        assert argv[argv.index("--network") + 1] == flag  # ovs: the veth is put in after the start
        assert mode in rt.capabilities.network_modes


def test_bare_metal_runs_in_a_named_network_namespace(tmp_path):
    rt = BareMetalRuntime(rootfs_dir=str(tmp_path), state_dir=str(tmp_path))
    spec = ContainerSpec(**{**SPEC.__dict__, "image": "rootfs:/r", "netns": "ppa-1"})
    assert rt.run_argv(spec)[:5] == ["ip", "netns", "exec", "ppa-1", "unshare"]
    assert rt.run_argv(ContainerSpec(**{**SPEC.__dict__, "image": "rootfs:/r"}))[0] == "unshare"


def test_nested_children_take_the_child_part_of_the_mode():
    rt = NestedRuntime()
    argv = rt.run_argv(ContainerSpec(**{**SPEC.__dict__, "network_mode": "ovs+bridge"}))
    assert argv[argv.index("--network") + 1] == "bridge"
    assert "ovs+bridge" in rt.capabilities.network_modes and "host+ovs" not in rt.capabilities.network_modes


def test_a_vm_on_ovs_computes_its_own_checksums(tmp_path):
    rt = VmRuntime(state_dir=str(tmp_path), kernel="/boot/vmlinuz-6.1.0-9-amd64", accel="tcg")
    nic = lambda mode: next(  # noqa: E731
        a for a in rt.run_argv(ContainerSpec(**{**SPEC.__dict__, "image": "vmdisk:/d", "network_mode": mode}))
        if a.startswith("virtio-net-pci")
    )  # fmt: skip
    assert nic("ovs").endswith(",csum=off,guest_csum=off") and "csum" not in nic("bridge")
    assert rt.capabilities.network_modes == {"bridge", "ovs"}  # no host network for a guest


def test_each_adapter_declares_what_the_report_says_of_it():
    """The report's words and order for a runtime come from its adapter, not from a study."""
    from interference import runtimes

    for name, adapter in runtimes.ADAPTERS.items():
        assert adapter.description and adapter.entity in ("bare metal", "container", "nested", "vm"), name
    assert runtimes.in_report_order(["vm", "docker", "baremetal", "nested", "mine"]) == [
        "baremetal",
        "docker",
        "nested",
        "vm",
        "mine",
    ]
    assert runtimes.description("lxc").startswith("LXC") and runtimes.description("mine") == "mine"
    assert runtimes.entity("nested (load)") == "" and runtimes.entity("podman") == "container"
