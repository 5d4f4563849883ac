"""The guest kernel booted at its PVH entry: the payload found in a bzImage, the entry note read
from the ELF's note segment, and the bzImage kept where either is missing."""

import glob
import lzma
import struct
import zlib
from pathlib import Path

import pytest
from interference.runtimes import vm_kernel
from interference.runtimes.vm_image import newest


def elf_with_notes(*notes: tuple[bytes, int]) -> bytes:
    """A minimal ELF64 whose one program header is a PT_NOTE segment holding `notes` (name, type)."""
    body = b""
    for name, kind in notes:
        name0 = name + b"\0"
        desc = b"\x00\x00\x00\x01"
        body += struct.pack("<III", len(name0), len(desc), kind)
        body += name0.ljust((len(name0) + 3) // 4 * 4, b"\0") + desc
    ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 64, 0, 0, 64, 56, 1, 64, 0, 0)
    phdr = struct.pack("<IIQQQQQQ", 4, 4, 64 + 56, 0, 0, len(body), len(body), 4)
    return header + phdr + body


def test_the_pvh_note_is_found_among_other_notes():
    assert vm_kernel.has_pvh_entry(elf_with_notes((b"GNU", 3), (b"Xen", 6), (b"Xen", 18)))
    assert not vm_kernel.has_pvh_entry(elf_with_notes((b"GNU", 3), (b"Xen", 6)))
    assert not vm_kernel.has_pvh_entry(elf_with_notes((b"Linux", 18)))  # another owner's type 18
    assert not vm_kernel.has_pvh_entry(b"MZ" + b"\0" * 100)


@pytest.mark.parametrize("compress", [lambda b: lzma.compress(b, format=lzma.FORMAT_XZ), zlib.compress])
def test_the_payload_is_taken_from_behind_the_setup_code(compress):
    elf = elf_with_notes((b"Xen", 18))
    packed = compress(elf)
    if packed[:2] == b"\x78\x9c":  # zlib's header: make it the gzip stream a bzImage holds
        gz = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        packed = gz.compress(elf) + gz.flush()
    assert vm_kernel.payload(b"\x00setup code\x00" * 50 + packed + b"trailer") == elf
    assert vm_kernel.payload(b"no payload here") is None


def test_a_kernel_without_the_entry_boots_as_it_is_and_the_answer_is_kept(tmp_path):
    kernel = tmp_path / "vmlinuz-9.9"
    kernel.write_bytes(b"setup" + lzma.compress(elf_with_notes((b"GNU", 3)), format=lzma.FORMAT_XZ))
    assert vm_kernel.boot_kernel(str(kernel), tmp_path / "cache") == str(kernel)
    (kept,) = [p.name for p in (tmp_path / "cache").iterdir()]
    assert kept.startswith("vmlinux-9.9-") and kept.endswith(".bzimage-only")
    with_entry = tmp_path / "vmlinuz-9.8"
    with_entry.write_bytes(b"setup" + lzma.compress(elf_with_notes((b"Xen", 18)), format=lzma.FORMAT_XZ))
    booted = vm_kernel.boot_kernel(str(with_entry), tmp_path / "cache")
    assert booted.startswith(str(tmp_path / "cache" / "vmlinux-9.8-"))
    assert Path(booted).read_bytes() == elf_with_notes((b"Xen", 18))


@pytest.mark.skipif(not glob.glob("/boot/vmlinuz-*"), reason="no kernel in /boot")
def test_this_hosts_kernel_has_a_pvh_entry_where_its_config_says_so():
    kernel = Path(newest("/boot/vmlinuz-*"))
    config = kernel.with_name(kernel.name.replace("vmlinuz-", "config-"))
    elf = vm_kernel.payload(kernel.read_bytes())
    assert elf is not None
    assert vm_kernel.has_pvh_entry(elf) == ("CONFIG_PVH=y" in config.read_text())
