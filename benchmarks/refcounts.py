"""Where a command's compiled code updates reference counts: numba's ``NRT_incref`` calls per call site.

numba counts the references to every array with atomic updates (``NRT_incref``/``NRT_decref``,
about 20 cycles each) that ``perf`` shows only as two hot functions, without their callers. This script
runs one ``smtlib`` command in this process with ``NRT_incref`` replaced by a version that also counts
its calls per return address, then names each of the busiest call sites: the compiled function, the
offset in it and the source line (from debug information: the file printed for an inlined function's
line can be its caller's).

numba compiles its runtime when it first needs it, so the replacement is installed before anything is
compiled; the kernels must then be compiled in this process too (an empty ``NUMBA_CACHE_DIR``, set
here to a temporary directory), which takes about a minute for the decoder. Counts are exact; times
are not measured (the counting slows every update).

    python benchmarks/refcounts.py [--top 40] -- decode --model M/model.yaml --weights W --input SRC ...
"""

from __future__ import annotations

import argparse
import bisect
import gc
import os
import pathlib
import subprocess
import sys
import tempfile

_SLOTS = 1 << 22  # counters, indexed by the low bits of the return address


def install_counting_incref():
    """Make numba's runtime count ``NRT_incref`` calls per return address; returns (counts, addresses)."""
    import numpy as np
    from llvmlite import ir
    from numba.core import cgutils
    from numba.core.runtime import nrtdynmod

    counts = np.zeros(_SLOTS, dtype=np.int64)
    addresses = np.zeros(_SLOTS, dtype=np.int64)

    def define(module, atomic_incr):
        fn = cgutils.get_or_insert_function(module, nrtdynmod.incref_decref_ty, "NRT_incref")
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block())
        ptr = fn.args[0]
        with cgutils.if_unlikely(b, b.icmp_unsigned("==", ptr, cgutils.get_null_value(ptr.type))):
            b.ret_void()
        i64 = ir.IntType(64)
        ret_fn = cgutils.get_or_insert_function(module, ir.FunctionType(cgutils.voidptr_t, [ir.IntType(32)]),
                                                "llvm.returnaddress")
        ret = b.ptrtoint(b.call(ret_fn, [ir.Constant(ir.IntType(32), 0)]), i64)
        slot = b.and_(ret, ir.Constant(i64, _SLOTS - 1))
        count = b.gep(b.inttoptr(ir.Constant(i64, counts.ctypes.data), i64.as_pointer()), [slot])
        b.store(b.add(b.load(count), ir.Constant(i64, 1)), count)
        b.store(ret, b.gep(b.inttoptr(ir.Constant(i64, addresses.ctypes.data), i64.as_pointer()), [slot]))
        b.call(atomic_incr, [b.bitcast(ptr, atomic_incr.args[0].type)])
        b.ret_void()

    nrtdynmod._define_nrt_incref = define
    return counts, addresses


def compiled_functions():
    """(address, symbol, library) of every function compiled in this process, by address."""
    import numba

    found = []
    for obj in gc.get_objects():
        if not isinstance(obj, numba.core.dispatcher.Dispatcher):
            continue
        for cres in obj.overloads.values():
            lib = cres.library
            module = getattr(lib, "_final_module", None)
            if module is None:
                continue  # loaded from the cache: no module, no address
            for fn in module.functions:
                if fn.is_declaration:
                    continue
                address = lib._codegen._engine.get_function_address(fn.name)
                if address:
                    found.append((address, fn.name, lib))
    found.sort(key=lambda f: f[0])
    return found


def source_line(lib, symbol: str, offset: int, work: pathlib.Path, objects: dict) -> str:
    """The source line of ``symbol + offset`` in ``lib``'s code, from its object file's debug information."""
    if id(lib) not in objects:
        path = work / f"lib{len(objects)}.o"
        path.write_bytes(lib._codegen._tm.emit_object(lib._final_module))
        symbols = {}
        for line in subprocess.run(["nm", str(path)], capture_output=True, text=True).stdout.splitlines():
            parts = line.split()
            if len(parts) == 3:
                symbols[parts[2]] = int(parts[0], 16)
        objects[id(lib)] = (path, symbols)
    path, symbols = objects[id(lib)]
    if symbol not in symbols:
        return "?"
    # the return address follows the call: the byte before it is the call's
    out = subprocess.run(["addr2line", "-e", str(path), hex(symbols[symbol] + offset - 1)], capture_output=True,
                         text=True).stdout.strip()
    return out.replace(str(pathlib.Path(__file__).resolve().parents[1]) + "/", "")


def short_name(symbol: str) -> str:
    """``_ZN6smtlib7decoder4cube11_fill_stackB4v159...`` -> ``smtlib.decoder.cube._fill_stack``."""
    if not symbol.startswith("_ZN"):
        return symbol
    parts, i = [], 3
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        n = int(symbol[i:j])
        parts.append(symbol[j:j + n])
        i = j + n
    return ".".join(parts) or symbol


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=40, help="call sites to print (default 40)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="an smtlib command and its options, after --")
    opts = ap.parse_args()
    command = opts.command[1:] if opts.command[:1] == ["--"] else opts.command
    if not command:
        ap.error("give an smtlib command after --")
    work = pathlib.Path(tempfile.mkdtemp(prefix="smtlib_refcounts_"))
    os.environ["NUMBA_CACHE_DIR"] = str(work / "numba_cache")
    os.environ["NUMBA_DEBUGINFO"] = "1"
    counts, addresses = install_counting_incref()
    from smtlib.cli import main as smtlib_main

    try:
        smtlib_main(command)
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
    functions = compiled_functions()
    starts = [f[0] for f in functions]
    total = int(counts.sum())
    sites = sorted(((int(counts[i]), int(addresses[i])) for i in counts.nonzero()[0]), reverse=True)
    objects: dict = {}
    print(f"NRT_incref calls: {total:,} at {len(sites)} call sites", flush=True)
    print("| calls | share | function | offset | source line |")
    print("|---:|---:|---|---:|---|")
    for n, address in sites[:opts.top]:
        k = bisect.bisect_right(starts, address) - 1
        if k < 0:
            print(f"| {n:,} | {100 * n / total:.1f} % | ? | | |")
            continue
        start, symbol, lib = functions[k]
        where = source_line(lib, symbol, address - start, work, objects)
        print(f"| {n:,} | {100 * n / total:.1f} % | {short_name(symbol)} | +{address - start:#x} | {where} |")
    print(f"metric: {total}")


if __name__ == "__main__":
    sys.exit(main())
