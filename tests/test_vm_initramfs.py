"""The VM runtime's initramfs gets its kernel modules uncompressed (busybox insmod loads only plain
.ko files; Ubuntu's and newer Debian kernels ship .ko.zst, .ko.xz or .ko.gz), in the order modprobe
resolved them. No VM is booted: modprobe's answer is faked over a module tree made here."""

import gzip
import lzma
import shutil
import subprocess

import pytest
from interference.runtimes import RuntimeUnavailable, vm_image
from interference.runtimes.vm import VmRuntime

HAS_ZSTD = shutil.which("zstd") is not None
REAL_RUN = subprocess.run


def fake_tree(tmp_path):
    """A module tree: {file: the uncompressed bytes it must give}."""
    tree = tmp_path / "lib/modules/6.99.0-1-test/kernel"
    tree.mkdir(parents=True)
    made = {}
    for name, compress in [
        ("virtio_pci.ko", lambda b: b),
        ("virtio_blk.ko.xz", lzma.compress),
        ("9pnet.ko.gz", gzip.compress),
        *([("ext4.ko.zst", None)] if HAS_ZSTD else []),
    ]:
        plain = f"\x7fELF module {name}\n".encode() * 100
        path = tree / name
        if compress is None:  # zstd: only the command compresses
            path.write_bytes(subprocess.run(["zstd", "-q", "-c"], input=plain, capture_output=True).stdout)
        else:
            path.write_bytes(compress(plain))
        made[path] = plain
    return made


def fake_modprobe(monkeypatch, paths, returncode=0, stderr=""):
    """modprobe --show-depends as it answers: insmod lines (dependencies first, one twice, options
    after the path) and a built-in module."""
    lines = [f"insmod {p} " for p in paths] + [f"insmod {paths[0]} ", "builtin crc32c"]
    answer = subprocess.CompletedProcess([], returncode, stdout="\n".join(lines) + "\n", stderr=stderr)
    monkeypatch.setattr(
        vm_image.subprocess,
        "run",
        lambda argv, **kw: answer if argv[0] == "modprobe" else REAL_RUN(argv, **kw),
    )


def test_compressed_modules_arrive_uncompressed_in_load_order(tmp_path, monkeypatch):
    made = fake_tree(tmp_path)
    fake_modprobe(monkeypatch, list(made))
    dest = tmp_path / "initramfs" / "modules"
    dest.mkdir(parents=True)
    order = VmRuntime(kernel="/boot/vmlinuz-6.99.0-1-test")._copy_modules(dest)
    names = ["virtio_pci.ko", "virtio_blk.ko", "9pnet.ko"] + (["ext4.ko"] if HAS_ZSTD else [])
    assert order == names  # the duplicate insmod line and the built-in one add nothing
    assert (dest / "order").read_text().split() == names
    assert sorted(p.name for p in dest.iterdir()) == sorted(names + ["order"])
    for path, plain in made.items():
        assert (dest / (path.name.split(".ko")[0] + ".ko")).read_bytes() == plain, path.name


def test_a_missing_module_or_zstd_is_named_before_anything_runs(tmp_path, monkeypatch):
    fake_modprobe(
        monkeypatch, [tmp_path / "a.ko"], returncode=1, stderr="modprobe: FATAL: Module 9p not found"
    )
    paths, lacking = vm_image.guest_modules("6.99.0-1-azure")
    assert paths == [] and "Module 9p not found" in lacking and "6.99.0-1-azure" in lacking
    zst = tmp_path / "ext4.ko.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd")  # a zstd frame's magic
    fake_modprobe(monkeypatch, [zst])
    monkeypatch.setattr(vm_image.shutil, "which", lambda name: None)
    assert vm_image.guest_modules("6.99.0-1-test") == (
        [zst],
        f"the `zstd` command (apt-get install zstd): {vm_image.ZSTD_WHY}",
    )
    with pytest.raises(RuntimeUnavailable, match="needs the `zstd` command"):
        vm_image.plain_module(zst)


def test_the_newest_kernel_is_chosen_by_version_not_by_string(tmp_path):
    for name in ("vmlinuz-6.9.0-1-amd64", "vmlinuz-6.10.0-1-amd64", "vmlinuz-6.1.0-28-amd64"):
        (tmp_path / name).touch()
    assert vm_image.newest(str(tmp_path / "vmlinuz-*")) == str(tmp_path / "vmlinuz-6.10.0-1-amd64")
