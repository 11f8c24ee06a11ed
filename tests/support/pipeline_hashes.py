"""The bytes of a whole small pipeline, as sha256 digests, for the CPU-independence test.

:func:`run_pipeline` runs :func:`smtlib.warmup.warm_up` in a directory: a synthetic 400-pair
corpus trained into Small, Medium and Big systems (alignment, phrases, reordering, LMs, sparse
features), decoded with both searches to 1-best, k-best lists and lattices, and tuned for two
iterations by every tuner (k-best, lattice and online), in the directory as the working directory
(so that the paths files record are relative). :func:`digests` hashes every file it wrote (gzip
files by their content; the binary pools and compiled models without the source files' times that
their headers keep for staleness checks).

``tests/data/pipeline_hashes.json`` holds the digests, committed; the test compares a fresh run with
them, so a CPU, compiler or library whose arithmetic differs fails the test on the file where the
bytes first differ. After a change that is meant to change outputs, regenerate the file:

    python -m tests.support.pipeline_hashes --update

(and say in the commit why the bytes changed).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile

HASHES = pathlib.Path(__file__).resolve().parents[1] / "data" / "pipeline_hashes.json"
#: files that are not outputs whose bytes are compared (none: no output records a time)
VOLATILE_SUFFIXES: tuple[str, ...] = ()
#: binary formats with a JSON header: magic -> where the header's uint64 length is
#: (smtlib.kbest.store, smtlib.decoder.compiled)
HEADERED = {b"\x89SMTPOOL": 8, b"smtlib-compiled\n": 16}
VOLATILE_KEYS = ("mtime_ns",)


def run_pipeline(workdir: pathlib.Path, env: dict[str, str] | None = None) -> None:
    """The warm-up's pipeline in ``workdir``, in a fresh Python process with ``env``."""
    code = "import pathlib; from smtlib.warmup import warm_up; warm_up(pathlib.Path('.'), log=lambda *a: None)"
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pipeline failed ({done.returncode}):\n{done.stderr[-3000:]}")


def digests(workdir: pathlib.Path) -> dict[str, str]:
    """name -> sha256 of the content of every output file under ``workdir`` but the volatile ones."""
    out = {}
    for path in sorted(workdir.rglob("*")):
        if not path.is_file() or path.name.endswith(VOLATILE_SUFFIXES):
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        out[path.relative_to(workdir).as_posix()] = hashlib.sha256(_without_times(data)).hexdigest()
    return out


def _drop(value):
    if isinstance(value, dict):
        return {k: _drop(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_drop(v) for v in value]
    return value


def _without_times(data: bytes) -> bytes:
    for magic, at in HEADERED.items():
        if data.startswith(magic):
            length = int.from_bytes(data[at : at + 8], "little")
            header = json.loads(data[at + 8 : at + 8 + length])
            return json.dumps(_drop(header), sort_keys=True).encode() + data[at + 8 + length :]
    return data


def compare(expected: dict[str, str], got: dict[str, str]) -> list[str]:
    """The files whose digest differs, is missing, or is new, in pipeline order (sorted names)."""
    names = sorted(set(expected) | set(got))
    return [n for n in names if expected.get(n) != got.get(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help=f"write the digests to {HASHES}")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="smtlib-hashes-") as tmp:
        run_pipeline(pathlib.Path(tmp), env=dict(os.environ))
        got = digests(pathlib.Path(tmp))
    if args.update:
        HASHES.parent.mkdir(parents=True, exist_ok=True)
        HASHES.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"{len(got)} digests written to {HASHES}")
        return 0
    expected = json.loads(HASHES.read_text()) if HASHES.exists() else {}
    differ = compare(expected, got)
    print(f"{len(got)} files, {len(differ)} differ" + (": " + ", ".join(differ[:20]) if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
