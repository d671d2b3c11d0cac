# SPDX-License-Identifier: MIT
"""Helpers for tests whose reads run in the reader worker (docs/SPEC.md §8)."""
import pathlib


def reach_as_nobody(folder: pathlib.Path) -> None:
    """Lets the user nobody, which the reader worker becomes when root runs toolfs, search
    folder and every parent up to /tmp (pytest's tmp_path sits under a 0700 folder)."""
    for up in (folder, *folder.parents):
        if up == pathlib.Path("/tmp"):
            break
        up.chmod(up.stat().st_mode | 0o055)
