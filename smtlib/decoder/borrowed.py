"""Arrays without reference counting, for the inner loops of the compiled search.

numba counts the references to every array: binding an array to a variable, passing it to a function
(inlined ones too) or taking it out of a tuple costs an atomic increment and a later decrement
(``NRT_incref``/``NRT_decref``, about 20 cycles each). LLVM-level pruning removes the pairs it can
prove redundant, but not across an inlined function with several exits or a loop whose arrays take
different paths (numba's ``refprune`` pass keeps any pair with another decrement between them). In a
search loop that binds a dozen arrays per scored word, those updates were more than half of the
compiled search's time (``benchmarks/results/profile_decode.md``).

:func:`borrowed` returns the same array (or tuple of arrays, nested tuples included) with its
reference-count handle (the *meminfo*) set to null. The data, shape and strides are the same, so every
read and write is the same; numba's reference-count calls on a null handle do nothing, and LLVM removes
them where it sees the null. The caller keeps the original alive: a borrowed array must not outlive the
function that borrowed it (never returned, stored in a returned tuple or kept across a reallocation).
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array


def _borrow_value(context, builder, ty, value):
    if isinstance(ty, types.Array):
        ary = make_array(ty)(context, builder, value)
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()
    if isinstance(ty, types.BaseTuple):
        for i, member in enumerate(ty):
            item = builder.extract_value(value, i)
            value = builder.insert_value(value, _borrow_value(context, builder, member, item), i)
        return value
    return value


def _has_array(ty) -> bool:
    if isinstance(ty, types.Array):
        return True
    return isinstance(ty, types.BaseTuple) and any(_has_array(m) for m in ty)


@intrinsic
def borrowed(typingctx, value):
    """``value`` (an array, or a tuple of arrays and scalars, nested) with no reference counting:
    valid only while the caller's own reference keeps it alive (the module docstring)."""
    if not _has_array(value):
        return None

    def codegen(context, builder, sig, args):
        return _borrow_value(context, builder, sig.args[0], args[0])

    return value(value), codegen
