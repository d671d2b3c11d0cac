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


def modules_linked_in(build_dir: pathlib.Path) -> bool:
    """True for a build that links the modules' objects into every program instead of building
    toolfs-*.so (sanitizer builds, readers/meson.build): its programs map every parser's library
    and its memory figures are the sanitizer's, not toolfs's."""
    return not (build_dir / "readers" / "toolfs-vips.so").exists()
