"""Unpacking another machine's tarball: the check used where Python has no extraction filters
(3.11.2, Debian bookworm's) refuses what the standard library's "data" filter refuses."""

import io
import tarfile
from pathlib import Path

import pytest
from interference.stores import tarballs


def tarball(tmp_path: Path, *members: tarfile.TarInfo) -> Path:
    path = tmp_path / "t.tar"
    with tarfile.open(path, "w") as tar:
        for m in members:
            data = b"x" if m.isfile() else b""
            m.size = len(data)
            tar.addfile(m, io.BytesIO(data) if m.isfile() else None)
    return path


def member(name: str, kind=tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    m = tarfile.TarInfo(name)
    m.type, m.linkname = kind, linkname
    return m


UNSAFE = {
    "parent": [member("../escaped")],
    "symlink out": [member("s/link", tarfile.SYMTYPE, "../../outside")],
    "absolute symlink": [member("s/link", tarfile.SYMTYPE, "/etc/passwd")],
    "device": [member("s/dev", tarfile.CHRTYPE)],
}


@pytest.fixture(params=["standard library", "own check"])
def without_filters(request, monkeypatch):
    """Both paths: the standard library's filter where it exists, and the check of 3.11.2."""
    if request.param == "own check":
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no extraction filters")
    return request.param


@pytest.mark.parametrize("case", UNSAFE)
def test_a_member_leaving_the_folder_is_refused(tmp_path, without_filters, case):
    path = tarball(tmp_path, member("s/ok"), *UNSAFE[case])
    with tarfile.open(path) as tar, pytest.raises(tarfile.TarError):
        tarballs.extract(tar, tmp_path / "into")
    assert not (tmp_path / "escaped").exists()


def test_an_absolute_name_stays_inside(tmp_path, without_filters):
    """The standard library strips the leading slash; the own check refuses the member."""
    path = tarball(tmp_path, member(str(tmp_path / "escaped")))
    try:
        with tarfile.open(path) as tar:
            tarballs.extract(tar, tmp_path / "into")
    except tarfile.TarError:
        assert without_filters == "own check"
    assert not (tmp_path / "escaped").exists()


def test_files_folders_and_inner_links_are_unpacked(tmp_path, without_filters):
    path = tarball(
        tmp_path,
        member("s", tarfile.DIRTYPE),
        member("s/a"),
        member("s/link", tarfile.SYMTYPE, "a"),
    )
    with tarfile.open(path) as tar:
        tarballs.extract(tar, tmp_path / "into")
    assert (tmp_path / "into/s/a").read_bytes() == b"x"
    assert (tmp_path / "into/s/link").resolve() == (tmp_path / "into/s/a").resolve()
