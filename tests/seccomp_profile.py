# SPDX-License-Identifier: MIT
"""Measures the system calls toolfs-reader-worker makes under its seccomp filter (issue 35,
docs/SPEC.md §8), so that its lists are measured rather than guessed:

    seccomp_profile.py [--reader] [--build DIR] [--quick] [--keep DIR] [--family NAME ...]

runs, with TOOLFS_WORKER_TEST=profile (the workers' filter logs instead of stopping: every call
runs; under `strace --seccomp-bpf -e trace=!futex` a refused call traps instead and strace
shows the SIGSYS naming it, which sandbox_confine.c then refuses as it would), one toolfs-mcp
per reader family: PDF (text, a page rendered, a region
zoomed, OCR of scans), images (PNG, JPEG, GIF, WebP: the fit and a region), rasters (BMP, TIFF,
ICO, HEIC, AVIF), SVG, Office (docx, xlsx, pptx, ODF), notebooks with image outputs, and media
(audio and video through FFmpeg: the default view, a frame or the audio from 1 s, and a span;
a frame libvips fits), over the files of the tests' generators (--quick: one generator per
family; for media the cue and chapter files of gen_cues) and a corpus of real-sized ones (a
60-page PDF, a 10-page scan, a 20000x20000 image in a PDF, test_pdf_stuck_page's PDFs, a
6000x4000 photo, a 40 MB notebook, a 20-minute film with 2,000 cues in MP4 and Matroska, 1,000 ID3 chapters, 4K H.264 and HEVC, VP9, AV1, AC-3, Opus ...). It
prints, per family, each call the workers (and their threads) made after their filter was on,
and whether sandbox_confine.c allows it, refuses it (an errno) or would stop the worker; the
exit status is 1 when a call would stop one. (--reader, the only mode, is accepted as before.)"""
import argparse
import collections
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "fixtures"))
import gen_audio_formats  # noqa: E402
import gen_cues  # noqa: E402
import gen_media  # noqa: E402
import gen_video  # noqa: E402

READER_SANDBOX = HERE.parent / "readers" / "sandbox" / "sandbox_confine.c"
MEDIA_SUFFIXES = (".mp3", ".wav", ".flac", ".ogg", ".opus", ".m4a", ".aiff", ".mp4", ".mkv",
                  ".webm", ".avi", ".ts", ".mov", ".ac3", ".wma", ".mka", ".wv", ".tta", ".aac",
                  ".eac3", ".caf", ".au", ".w64", ".voc", ".mod", ".dsf", ".ape", ".mpc", ".tak",
                  ".shn", ".dff", ".s3m", ".xm", ".it")


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def big_corpus(out: pathlib.Path) -> None:
    """Real-sized files: long, many entries, big frames, the codecs a library meets."""
    out.mkdir(parents=True, exist_ok=True)
    minutes = 20
    step = minutes * 60 * 1000 // 2000
    (out / "film.srt").write_text("".join(
        f"{i + 1}\n{gen_cues.srt_time(i * step)} --> {gen_cues.srt_time(i * step + step // 2)}\n"
        f"Line {i + 1} of the film\n\n" for i in range(2000)), encoding="utf-8")
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=5", "-f", "lavfi", "-i",
           "sine=frequency=300:sample_rate=48000", "-i", str(out / "film.srt"), "-t",
           str(minutes * 60), "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264",
           "-preset", "ultrafast", "-g", "50", "-pix_fmt", "yuv420p", "-c:a", "aac",
           "-c:s", "mov_text", str(out / "film.mp4"))
    ffmpeg("-i", str(out / "film.mp4"), "-map", "0", "-c", "copy", "-c:s", "srt",
           str(out / "film.mkv"))
    meta = [";FFMETADATA1"]
    for i in range(1000):
        meta += ["[CHAPTER]", "TIMEBASE=1/1000", f"START={i * 600}", f"END={(i + 1) * 600}",
                 f"title=Part {i + 1}"]
    (out / "chapters1000.txt").write_text("\n".join(meta) + "\n", encoding="utf-8")
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=600", "-i",
           str(out / "chapters1000.txt"), "-map", "0", "-map_chapters", "1", "-c:a",
           "libmp3lame", "-b:a", "32k", str(out / "book.mp3"))
    big = "testsrc2=size=3840x2160:rate=25"
    ffmpeg("-f", "lavfi", "-i", big, "-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
           "-pix_fmt", "yuv420p", str(out / "uhd.mp4"))
    ffmpeg("-f", "lavfi", "-i", big, "-t", "1", "-c:v", "libx265", "-preset", "ultrafast",
           "-x265-params", "log-level=none", str(out / "uhd_hevc.mkv"))
    small = "testsrc2=size=640x360:rate=25"
    ffmpeg("-f", "lavfi", "-i", small, "-t", "2", "-c:v", "libvpx-vp9", "-deadline",
           "realtime", "-cpu-used", "8", str(out / "vp9.webm"))
    ffmpeg("-f", "lavfi", "-i", small, "-t", "1", "-c:v", "libaom-av1", "-cpu-used", "8",
           "-row-mt", "0", str(out / "av1.mkv"))
    ffmpeg("-f", "lavfi", "-i", small, "-t", "2", "-c:v", "mpeg2video", "-f", "mpegts",
           str(out / "mpeg2.ts"))
    ffmpeg("-f", "lavfi", "-i", small, "-t", "2", "-c:v", "prores_ks", str(out / "prores.mov"))
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=30:sample_rate=48000", "-ac", "2"]
    for name, codec in (("tone.ac3", ["-c:a", "ac3"]), ("tone.wma", ["-c:a", "wmav2"]),
                        ("opus.mka", ["-c:a", "libopus"]), ("alac.m4a", ["-c:a", "alac"])):
        ffmpeg(*tone, *codec, str(out / name))


def sandbox_lists(source=READER_SANDBOX) -> tuple:
    """(allowed, refused) system call names of sandbox_confine.c's filter."""
    text = source.read_text()

    def names(array):
        body = re.search(r"static const int " + array + r"\[\] = \{(.*?)\};", text, re.S)[1]
        return set(re.findall(r"SCMP_SYS\((\w+)\)", body))
    # rules of their own: tgkill to itself, threads only, thread names, no clone3
    allowed = names("allowed") | {"tgkill", "clone", "prctl"}
    refused = names("refused") | {"clone3"}
    return allowed, refused


def traced_mcp(build: pathlib.Path, root: pathlib.Path, trace: pathlib.Path, env: dict,
               strace_args=(), render_ms=300000) -> tuple:
    """One toolfs-mcp under strace -f -ff (a trace file per thread in trace), initialized:
    (the process, a function that calls a method and returns its result)."""
    cmd = ["strace", "-f", "-ff", "-qq", *strace_args, "-o", str(trace / "t"),
           str(build / "mcp" / "toolfs-mcp"), "--max_render_ms", str(render_ms), str(root)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**os.environ, **env})
    next_id = 0

    def call(method, params):
        nonlocal next_id
        next_id += 1
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method,
                                     "params": params}).encode() + b"\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())["result"]

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "seccomp_profile", "version": "1"}})
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    return proc, call


# The reader families of toolfs-reader-worker (docs/SPEC.md §8), by the name's suffix.
FAMILIES = {
    "pdf": (".pdf",),
    "image": (".png", ".jpg", ".jpeg", ".gif", ".webp"),
    "raster": (".bmp", ".tif", ".tiff", ".ico", ".heic", ".avif"),
    "svg": (".svg",),
    "office": (".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp"),
    "notebook": (".ipynb",),
    "media": MEDIA_SUFFIXES,
}


def reader_big_corpus(out: pathlib.Path) -> None:
    """Real-sized files for the reader worker: long, big pages and pictures, many outputs."""
    import gen_big_notebook
    import gen_pdfs
    from PIL import Image
    out.mkdir(parents=True, exist_ok=True)
    gen_pdfs.text_pdf(out / "sixty.pdf", 60)
    gen_pdfs.big_image_pdf(out / "bigimage.pdf")  # test_pdf_worker_memory's 20000x20000 image
    photo = Image.effect_noise((6000, 4000), 60).convert("RGB")
    photo.save(out / "photo.jpg", quality=90)
    photo.resize((3000, 2000)).save(out / "photo.png")
    photo.resize((3000, 2000)).save(out / "photo.tiff", compression="tiff_lzw")
    photo.resize((2000, 1500)).save(out / "photo.webp", quality=80)
    subprocess.run(["heif-enc", "-q", "60", "-o", str(out / "photo.heic"), str(out / "photo.png")],
                   check=True, capture_output=True)
    gen_big_notebook.write(out / "big.ipynb", 40)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="4000" height="3000">']
    svg += [f'<circle cx="{i * 37 % 4000}" cy="{i * 53 % 3000}" r="{5 + i % 40}" '
            f'fill="#{i * 2654435761 % 0xffffff:06x}" opacity="0.5"/>' for i in range(20000)]
    svg += ['<text x="100" y="200" font-size="120">A large drawing</text></svg>']
    (out / "big.svg").write_text("\n".join(svg))


def media_quick_corpus(out: pathlib.Path) -> None:
    """gen_cues's videos (31 to 2,000 cues) and 200-chapter MP3, and a video whose contact
    sheet libvips fits (noise: its PNG passes image_max_b64)."""
    gen_cues.generate(out)
    ffmpeg("-f", "lavfi", "-i", "nullsrc=size=1920x1080:rate=5,geq=random(1)*255:128:128",
           "-t", "3", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
           str(out / "noise.mp4"))


def reader_quick_corpus(out: pathlib.Path) -> None:
    """One small file of each kind the families read, the scan for OCR among them."""
    import gen_notebooks
    import gen_office
    import gen_pdfs
    import gen_scans
    import gen_svg
    import nbformat
    from PIL import Image
    out.mkdir(parents=True, exist_ok=True)
    gen_pdfs.text_pdf(out / "one.pdf", 1)
    gen_scans.scanned_pdf(out / "scan1.pdf", [gen_scans.page_lines(7, n_lines=6)])
    picture = Image.effect_noise((1200, 800), 40).convert("RGB")
    for name in ("pic.png", "pic.jpg", "pic.gif", "pic.webp", "pic.bmp", "pic.tiff", "pic.ico"):
        picture.save(out / name)
    subprocess.run(["heif-enc", "-q", "60", "-o", str(out / "pic.heic"), str(out / "pic.png")],
                   check=True, capture_output=True)
    subprocess.run(["convert", str(out / "pic.png"), f"AVIF:{out / 'pic.avif'}"], check=True,
                   capture_output=True)
    (out / "chart.svg").write_text(gen_svg.chart(800, 600))
    (out / "basic.docx").write_bytes(gen_office.basic_docx())
    (out / "basic.xlsx").write_bytes(gen_office.basic_xlsx())
    (out / "deck.pptx").write_bytes(gen_office.deck_pptx())
    (out / "basic.odt").write_bytes(gen_office.basic_odt())
    gen_notebooks.write_v4(out / "basic.ipynb", gen_notebooks.basic_notebook())
    nb = gen_notebooks.basic_notebook()  # an image output past the fit: libvips fits it
    nb.cells.append(nbformat.v4.new_code_cell("show()", outputs=[nbformat.v4.new_output(
        "display_data", data={"image/png": gen_notebooks.b64((out / "pic.png").read_bytes())})]))
    gen_notebooks.write_v4(out / "picture.ipynb", nb)


def stuck_pdfs(out: pathlib.Path) -> None:
    """test_pdf_stuck_page's PDFs: a page poppler draws or extracts past any budget; read under
    the default max_render_ms (STUCK_RENDER_MS), so that their reads end at their deadline."""
    import gen_stuck_pdf
    out.mkdir(parents=True)
    for kind in gen_stuck_pdf.KINDS:
        (out / f"{kind}.pdf").write_bytes(gen_stuck_pdf.build(kind))
    (out / "scan.pdf").write_bytes(gen_stuck_pdf.build("shading", words=False))


STUCK_RENDER_MS = 10000


# The parts of the corpus that hold media files (the others hold none).
MEDIA_PARTS = ("media_quick", "media", "video", "formats", "media_big")


def reader_corpus(root: pathlib.Path, quick: bool, only=None) -> dict:
    """{family: files} to read, each part generated unless root holds it: --quick a file of
    each kind, else every file of the tests' generators and the real-sized corpus; with only
    (families), the parts those need alone."""
    parts = {"quick": reader_quick_corpus, "media_quick": media_quick_corpus}
    if not quick:
        import gen_fit
        import gen_images
        import gen_notebooks
        import gen_office
        import gen_office_cases
        import gen_pdf_layers
        import gen_pdfs
        import gen_plots
        import gen_regions
        import gen_scans
        import gen_svg
        parts = {"pdfs": gen_pdfs.generate, "scans": lambda out: gen_scans.generate(out, 4),
                 "images": gen_images.generate, "svg": gen_svg.generate,
                 "office": gen_office.generate, "notebooks": gen_notebooks.generate,
                 "fit": gen_fit.generate, "plots": gen_plots.generate,
                 "layers": lambda out: (out.mkdir(parents=True), gen_pdf_layers.generate(out)),
                 "regions": gen_regions.generate, "office_cases": gen_office_cases.generate,
                 "stuck": stuck_pdfs, "big": reader_big_corpus, "media_quick": media_quick_corpus,
                 "media": gen_media.generate, "video": gen_video.generate,
                 "formats": gen_audio_formats.generate, "media_big": big_corpus}
    if only:
        others = bool(set(only) - {"media"})
        parts = {name: generate for name, generate in parts.items()
                 if ("media" in only if name in MEDIA_PARTS else others)}
    for name, generate in parts.items():
        if not (root / name).is_dir():
            generate(root / name)
    files = sorted(p for name in parts for p in (root / name).rglob("*")
                   if p.is_file() and ".work" not in p.parts)
    return {family: [p for p in files if p.suffix.lower() in suffixes]
            for family, suffixes in FAMILIES.items()}


def reader_reads(family: str, path: str) -> list:
    """The reads of a file: the default view, and of a PDF its first page rendered, a region of
    it and its OCR forced; of an image (PNG, JPEG, GIF, WebP) a region."""
    reads = [{"file_path": path}]
    if family == "pdf":
        reads += [{"file_path": path, "pages": "1"},
                  {"file_path": path, "region": "1@300x200+50+50"},
                  {"file_path": path, "pages": "1", "ocr": "on"}]
    elif family == "image":
        reads += [{"file_path": path, "region": "40x30+1+1"}]
    elif family == "media":
        reads += [{"file_path": path, "time": "1"}, {"file_path": path, "time": "0.5-2.5"}]
    return reads


def run_reader_reads(build: pathlib.Path, root: pathlib.Path, family: str, files: list,
                     trace: pathlib.Path, render_ms=300000) -> list:
    """Reads family's files through one toolfs-mcp under strace -ff; returns (args, error)."""
    # futex is left out of the trace, and with --seccomp-bpf the threads do not even stop for
    # it: a page render's and OCR's threads waiting on each other make hundreds of thousands
    # (minutes a page under ptrace's stops); it is allowed, and glibc's locks need it. Every
    # other call stops for strace; a call the filter refuses with an errno traps instead in
    # this run (sandbox_confine.c refuse), and strace shows the SIGSYS that names it.
    proc, call = traced_mcp(build, root, trace, {"TOOLFS_WORKER_TEST": "profile"},
                            ("--seccomp-bpf", "-ttt", "-e", "trace=!futex"), render_ms)
    answers = []
    for path in files:
        for args in reader_reads(family, str(path.relative_to(root))):
            got = call("tools/call", {"name": "read", "arguments": args})
            text = got["content"][0].get("text", "") if got.get("content") else ""
            answers.append((args, text[:300] if got.get("isError") else None))
    proc.stdin.close()
    proc.wait(timeout=600)
    return answers


def trace_lives(path: pathlib.Path) -> list:
    """The lives of the tasks one strace -ff -ttt file holds, in order: a task id the kernel
    reuses (pid_max 32768 on a busy machine) has strace append the new task to the old one's
    file. Each life: (its first call's time, its call names, [(time, id) of the tasks it cloned],
    the index in the names past its seccomp filter's load, or None)."""
    lives, life, answered = [], None, False
    for line in path.read_text(errors="replace").splitlines():
        stamp = re.match(r"(\d+\.\d+) (.*)", line)
        if not stamp:
            continue
        when, line = float(stamp[1]), stamp[2]
        if life is None:
            life = (when, [], [], [None])
            lives.append(life)
        names, kids, on = life[1], life[2], life[3]
        if line.startswith("+++ "):  # its end (killed, or exited: -qq prints no exit)
            life, answered = None, False
            continue
        # a refused call, trapped and answered its errno by the worker's handler, whose
        # return (rt_sigreturn) is the answer's, not a call of the library
        refused = re.match(r"--- SIGSYS .*si_syscall=__NR_(\w+)", line)
        if refused and on[0] is not None:
            names.append(refused[1])
            answered = True
            continue
        m = re.match(r"(\w+)\(", line)
        if not m:
            continue
        if answered and m[1] == "rt_sigreturn":
            answered = False
            continue
        answered = False
        if on[0] is None and m[1] == "seccomp" and "SECCOMP_SET_MODE_FILTER" in line and \
                re.search(r"\) += 0$", line):
            on[0] = len(names) + 1
        name = m[1]
        if name == "clone" and on[0] is not None:
            if "CLONE_THREAD" not in line:
                name = "clone(fork)"
            else:  # glibc tried clone3 first, which the filter answers ENOSYS unseen
                names.append("clone3")
            got = re.search(r"= (\d+)$", line)
            if got:
                kids.append((when, int(got[1])))
        names.append(name)
        if name in ("exit", "exit_group"):  # its end: the id may be reused after it
            life, answered = None, False
    return [(when, names, kids, on[0]) for when, names, kids, on in lives]


def reader_worker_calls(trace: pathlib.Path) -> tuple:
    """(per system call how many workers made it after their filter was on, workers, and
    threads at most per worker). A worker's threads (strace -ff: a file each) count as it."""
    lives = {int(path.name.rsplit(".", 1)[1]): trace_lives(path) for path in trace.iterdir()}

    def child(when, tid):  # the life of tid that began after its clone at when
        later = [life for life in lives.get(tid, []) if life[0] >= when]
        return min(later, key=lambda life: life[0]) if later else None
    seen, most, workers = collections.Counter(), 0, 0
    for life in (life for each in lives.values() for life in each if life[3] is not None):
        workers += 1
        made, todo, threads = set(life[1][life[3]:]), list(life[2]), 0
        while todo:
            kid = child(*todo.pop())
            threads += 1
            if kid:
                made.update(kid[1])
                todo += kid[2]
        most = max(most, threads)
        seen.update(made)
    return seen, workers, most


def reader_main(build: pathlib.Path, quick: bool, keep, only=None) -> int:
    allowed, refused = sandbox_lists(READER_SANDBOX)
    stopped = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(keep or tmp) / "reader_corpus"
        corpus = reader_corpus(root, quick, only)
        for family, files in corpus.items():
            if only and family not in only:
                continue
            trace = pathlib.Path(tmp) / f"trace-{family}"
            trace.mkdir()
            stuck = [p for p in files if (root / "stuck") in p.parents]
            answers = run_reader_reads(build, root, family,
                                       [p for p in files if p not in stuck], trace)
            if stuck:
                answers += run_reader_reads(build, root, family, stuck, trace, STUCK_RENDER_MS)
            seen, workers, threads = reader_worker_calls(trace)
            shutil.rmtree(trace)
            failed = [(args, text) for args, text in answers if text is not None]
            print(f"{family}: {len(files)} files, {len(answers)} reads, {len(failed)} failed, "
                  f"{workers} workers, at most {threads} threads in one")
            for name, count in sorted(seen.items()):
                verdict = "allowed" if name in allowed else "errno" if name in refused \
                    else "STOPPED"
                stopped += verdict == "STOPPED"
                print(f"  {name:24} {count:5} workers  {verdict}")
            print(f"  {family} measured: {' '.join(sorted(seen))}")
            for args, text in failed:
                print(f"failed: {json.dumps(args)}: {text}", file=sys.stderr)
                stopped += "stopped by its sandbox" in text
            if not seen:
                stopped += 1
    return 1 if stopped else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.environ.get("TOOLFS_BUILD_DIR", "build"))
    ap.add_argument("--quick", action="store_true", help="one generator per family")
    ap.add_argument("--keep", help="generate the corpus here and keep it (reused when there)")
    ap.add_argument("--reader", action="store_true", help="the only mode (accepted as before)")
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES),
                    help="this family alone (repeatable; default: all)")
    args = ap.parse_args()
    return reader_main(pathlib.Path(args.build).resolve(), args.quick, args.keep, args.family)


if __name__ == "__main__":
    sys.exit(main())
