"""The kernel a `vm` guest boots: where it can, the uncompressed kernel at its 64-bit PVH entry
instead of the distribution's bzImage.

A bzImage decompresses itself at every boot; Debian's is XZ, and under TCG (an emulator: this
host's KVM boots only PVM kernels) that took about 4.5 s of each boot, before the kernel's first
message. QEMU starts an ELF kernel that carries a PVH entry note (CONFIG_PVH, set in Debian's
kernels) directly, so the payload is decompressed once on the host and kept beside the image
disks. A kernel without that note, or with a payload Python cannot decompress, boots as it is."""

from __future__ import annotations

import hashlib
import lzma
import os
import struct
import zlib
from pathlib import Path

# The compressed payload's magic numbers in a bzImage (Python decompresses these two).
XZ_MAGIC = b"\xfd7zXZ\x00"
GZIP_MAGIC = b"\x1f\x8b\x08"
PT_NOTE = 4
XEN_ELFNOTE_PHYS32_ENTRY = 18  # the PVH entry point QEMU boots (Linux: arch/x86/platform/pvh)


def payload(bzimage: bytes) -> bytes | None:
    """The ELF kernel compressed inside a bzImage, or None (another compression, or no ELF)."""
    for magic, decompress in ((XZ_MAGIC, _xz), (GZIP_MAGIC, _gzip)):
        at = bzimage.find(magic)
        if at < 0:
            continue
        try:
            elf = decompress(bzimage[at:])
        except (lzma.LZMAError, zlib.error):
            continue
        if elf.startswith(b"\x7fELF"):
            return elf
    return None


def _xz(data: bytes) -> bytes:
    return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data)  # trailing bytes ignored


def _gzip(data: bytes) -> bytes:
    return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)  # stops at the stream's end


def has_pvh_entry(elf: bytes) -> bool:
    """Whether a 64-bit little-endian ELF carries the Xen PVH entry note in a PT_NOTE segment."""
    if elf[:5] != b"\x7fELF\x02" or elf[5] != 1:
        return False
    (phoff,) = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, phoff + i * phentsize)
        if p_type != PT_NOTE:
            continue
        at, end = p_offset, p_offset + p_filesz
        while at + 12 <= end:
            namesz, descsz, kind = struct.unpack_from("<III", elf, at)
            name = elf[at + 12 : at + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and kind == XEN_ELFNOTE_PHYS32_ENTRY:
                return True
            at += 12 + _aligned(namesz) + _aligned(descsz)
    return False


def _aligned(n: int) -> int:
    return (n + 3) & ~3


def boot_kernel(kernel: str, cache_dir: Path) -> str:
    """The file QEMU's -kernel gets: the kept uncompressed kernel where it has a PVH entry (made
    once per kernel file), else `kernel` itself."""
    source = Path(kernel)
    if not source.is_file():
        return kernel  # the adapter's availability check names what is missing
    bzimage = source.read_bytes()
    digest = hashlib.sha256(bzimage).hexdigest()[:12]
    kept = cache_dir / f"vmlinux-{source.name.removeprefix('vmlinuz-')}-{digest}"
    refused = kept.with_name(kept.name + ".bzimage-only")
    if kept.exists():
        return str(kept)
    if refused.exists():
        return kernel
    elf = payload(bzimage)
    cache_dir.mkdir(parents=True, exist_ok=True)
    if elf is None or not has_pvh_entry(elf):
        refused.write_text("no PVH entry or no payload Python decompresses: the bzImage boots\n")
        return kernel
    partial = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")  # two guests of a run may make it at once
    partial.write_bytes(elf)
    partial.replace(kept)
    return str(kept)
