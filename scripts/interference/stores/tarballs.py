"""Unpacking a tarball made elsewhere (a saved session, another host's export) without letting
it write outside its folder. Python 3.11.4 and later refuse such members themselves
(tarfile's "data" filter); Debian bookworm's Python is 3.11.2, which has no filters, so there
the members are checked here first, by the same rules."""

from __future__ import annotations

import tarfile
from pathlib import Path


class UnsafeMember(tarfile.TarError):
    """A member that would be written outside the folder, or is not a file, folder or link."""


def _check(member: tarfile.TarInfo, into: Path) -> None:
    target = (into / member.name).resolve()
    if member.name.startswith("/") or not target.is_relative_to(into):
        raise UnsafeMember(f"{member.name}: would be written outside {into}")
    if member.issym() or member.islnk():
        base = target.parent if member.issym() else into
        link = (base / member.linkname).resolve()
        if member.linkname.startswith("/") or not link.is_relative_to(into):
            raise UnsafeMember(f"{member.name}: links outside {into}")
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise UnsafeMember(f"{member.name}: not a file, folder or link")


def extract(tar: tarfile.TarFile, into: Path) -> None:
    """Every member of `tar` into `into`; tarfile.TarError when one would leave it."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(into, filter="data")
        return
    into = Path(into).resolve()
    members = tar.getmembers()
    for member in members:
        _check(member, into)
    tar.extractall(into, members=members)
