"""eris_lab._files: the one home of paths and atomic writes."""

from __future__ import annotations

import pytest

from eris_lab._files import cache_dir, repo_root, sha256_file, write_atomic


def test_repo_root_holds_the_checkout_and_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    assert (repo_root() / "eris_lab" / "_files.py").is_file() and (repo_root() / "descriptors").is_dir()
    monkeypatch.setenv("ERIS_LAB_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"


def test_sha256_file_matches_hashlib(tmp_path):
    import hashlib

    path = tmp_path / "x.bin"
    path.write_bytes(b"\x00abc" * 1000)
    assert sha256_file(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_write_atomic_keeps_last_good_file_on_failure(tmp_path, monkeypatch):
    path = write_atomic(tmp_path / "k.toml", "good")
    import os

    def boom(*_):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_atomic(path, "bad")
    assert path.read_text() == "good"
    assert [p.name for p in tmp_path.iterdir()] == ["k.toml"]  # no temp file left behind


def test_write_atomic_gives_a_new_file_the_umask_mode_and_keeps_an_old_files_mode(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "report.html", "<p>hi</p>")
        assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by the class, not owner-only
        path.chmod(0o600)
        write_atomic(path, "<p>again</p>")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_shown_path_is_relative_inside_the_checkout_and_unchanged_outside(tmp_path):
    from eris_lab._files import repo_root, shown_path

    assert shown_path(repo_root() / "descriptors") == "descriptors"  # a committed record names no machine
    assert shown_path(tmp_path) == str(tmp_path)


def test_write_atomic_never_replaces_a_device_or_a_fifo(tmp_path):
    """Round fifteen's variants (2026-12-07): ``calibrate --out`` on a FIFO or a character device
    renamed a regular file over the node (as root, the machine's /dev/full). Refused, node kept.
    Only nodes made here are tried: never a system device."""
    import os
    import stat

    from eris_lab.errors import ErisLabError

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ErisLabError, match="not a regular file"):
        write_atomic(fifo, "knobs")
    assert stat.S_ISFIFO(fifo.stat().st_mode) and [p.name for p in tmp_path.iterdir()] == ["out.fifo"]
    full = tmp_path / "full"
    try:
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # /dev/full's numbers; root only
    except (PermissionError, OSError):
        return
    with pytest.raises(ErisLabError, match="not a regular file"):
        write_atomic(full, "knobs")
    assert stat.S_ISCHR(full.stat().st_mode)
