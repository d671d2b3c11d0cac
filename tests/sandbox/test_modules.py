# SPDX-License-Identifier: MIT
"""The heavy optional readers as shared modules (docs/SPEC.md §1): a text read maps none of
poppler, cairo, libvips, libxml2, ICU, libzip, uchardet (C++) or OpenSSL; a missing module is an `unsupported` result whose
sentence names it, never a crash; a PDF, a .docx and an image that needs fitting load theirs from
the build tree, in the reader worker (docs/SPEC.md §8)."""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import zlib

import docx
import pytest

from worker_util import modules_linked_in, reach_as_nobody

HEAVY = ("libpoppler", "libcairo", "libvips", "libglib", "libxml2", "libicu", "libzip", "libuchardet",
         "libstdc++", "libcrypto")


def _png(width: int, height: int) -> bytes:
    """A valid grey 8-bit PNG of one colour, made here with zlib (independent of libvips)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _pdf() -> bytes:
    """A one-page PDF with the text "Module test", xref offsets computed."""
    stream = b"BT /F1 12 Tf 72 720 Td (Module test) Tj ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("modules")
    (root / "one.txt").write_text("one line\n")
    (root / "doc.pdf").write_bytes(_pdf())
    (root / "wide.png").write_bytes(_png(3000, 20))
    (root / "small.png").write_bytes(_png(30, 20))
    document = docx.Document()
    document.add_paragraph("Module test")
    document.save(root / "doc.docx")
    return root


@pytest.fixture
def loaded_modules(build_dir):
    """Skips tests of loading when this build links the modules in (sanitizer builds do, see
    readers/meson.build)."""
    if modules_linked_in(build_dir):
        pytest.skip("this build links the modules into its executables")


def _read(build_dir, path, env_extra=None, trace=False):
    env = dict(os.environ)
    env.pop("TOOLFS_MODULE_DIR", None)
    env.update(env_extra or {})
    if trace:
        env["LD_DEBUG"] = "files"
    proc = subprocess.run([str(build_dir / "cli" / "toolfs-read"), str(path)],
                          capture_output=True, timeout=60, env=env)
    return proc, json.loads(proc.stdout)


def _loaded(stderr: bytes) -> str:
    """The objects ld.so opened (LD_DEBUG=files), as one string."""
    return "\n".join(line for line in stderr.decode(errors="replace").splitlines()
                     if "file=" in line)


def test_text_read_maps_no_heavy_library(build_dir, loaded_modules, files):
    proc, doc = _read(build_dir, files / "one.txt", trace=True)
    assert doc["success"] and doc["content"] == "     1\tone line\n"
    loaded = _loaded(proc.stderr)
    assert "libmagic" in loaded  # the trace works
    for lib in HEAVY:
        assert lib not in loaded


def test_legacy_charset_opens_uchardet(build_dir, loaded_modules, tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Grüße aus Köln, déjà vu, naïve façade.\n".encode("iso-8859-1") * 20)
    proc, doc = _read(build_dir, path, trace=True)
    assert doc["success"] and doc["metadata"]["encoding"] not in ("utf-8", "ascii")
    assert doc["content"].startswith("     1\tGrüße aus Köln, déjà vu, naïve façade.\n")
    assert "libuchardet" in _loaded(proc.stderr)


def test_small_png_needs_no_module(build_dir, loaded_modules, files):
    proc, doc = _read(build_dir, files / "small.png", trace=True)
    assert doc["success"] and doc["images"][0]["width"] == 30
    assert "libvips" not in _loaded(proc.stderr)


def test_pdf_loads_its_module_in_the_reader_worker_only(build_dir, loaded_modules, files):
    """The module is loaded from the build tree by toolfs-reader-worker (docs/SPEC.md §8),
    never by toolfs-read itself (tests/sandbox/test_sandbox.py traces the worker's opens)."""
    proc, doc = _read(build_dir, files / "doc.pdf", trace=True)
    assert doc["success"], doc
    assert "Module test" in doc["content"]
    loaded = _loaded(proc.stderr)
    assert "libmagic" in loaded and "toolfs-pdf.so" not in loaded


def test_docx_loads_the_office_module_in_the_reader_worker_only(build_dir, loaded_modules, files):
    proc, doc = _read(build_dir, files / "doc.docx", trace=True)
    assert doc["success"], doc
    assert doc["content"] == "     1\tModule test\n"
    loaded = _loaded(proc.stderr)
    assert "libmagic" in loaded
    assert "toolfs-office.so" not in loaded and "libxml2" not in loaded and "libzip" not in loaded


def _worker_beside(build_dir, folder):
    """folder as the module directory of a read: the reader worker there (it runs the read,
    docs/SPEC.md §8) and reachable by the user nobody it becomes, with no module in it."""
    shutil.copy(build_dir / "readers" / "toolfs-reader-worker", folder)
    reach_as_nobody(folder)


def test_fitting_loads_the_vips_module(build_dir, files):
    _, doc = _read(build_dir, files / "wide.png")
    assert doc["success"], doc
    assert doc["metadata"]["resized"]["scale"] == 1.5


@pytest.mark.parametrize("name,module,sentence", [
    ("doc.pdf", "toolfs-pdf.so", "PDF reading needs poppler: toolfs's module toolfs-pdf.so is "
     "not installed in {dir}"),
    ("doc.docx", "toolfs-office.so", "Office reading needs libzip and libxml2: toolfs's module "
     "toolfs-office.so is not installed in {dir}"),
    ("wide.png", "toolfs-vips.so", "Unsupported image format: PNG (toolfs's module "
     "toolfs-vips.so is not installed in {dir})"),
])
def test_missing_module_is_unsupported_naming_it(build_dir, loaded_modules, files, tmp_path, name,
                                                  module, sentence):
    _worker_beside(build_dir, tmp_path)
    proc, doc = _read(build_dir, files / name, {"TOOLFS_MODULE_DIR": str(tmp_path)})
    assert proc.returncode == 1
    assert doc["success"] is False
    assert doc["errorCode"] == "unsupported"
    assert doc["error"] == sentence.format(dir=tmp_path)


def test_broken_module_is_unsupported_with_the_loader_reason(build_dir, loaded_modules, files, tmp_path):
    _worker_beside(build_dir, tmp_path)
    (tmp_path / "toolfs-pdf.so").write_bytes(b"not an ELF file")
    proc, doc = _read(build_dir, files / "doc.pdf", {"TOOLFS_MODULE_DIR": str(tmp_path)})
    assert doc["errorCode"] == "unsupported"
    assert doc["error"].startswith("PDF reading needs poppler: toolfs's module toolfs-pdf.so "
                                   "could not be loaded: ")
    assert str(tmp_path / "toolfs-pdf.so") in doc["error"]
