"""A hint to the processor to load an array element into the cache ahead of use.

Loops that read rows scattered over a large array (a node's rows in the
training sample) stall on each row's first access; asking for the row a few
iterations ahead overlaps those waits. The hint changes no result.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["prefetch"]


def prefetch(array, index):
    """Ask for ``array[index]`` (1-d) or the row ``array[index, 0]`` (2-d).

    In compiled code, a prefetch instruction; in Python (a kernel run
    uncompiled, e.g. by the tests), nothing.
    """


@overload(prefetch)
def _prefetch_compiled(array, index):
    if isinstance(array, types.Array) and isinstance(index, types.Integer):
        return lambda array, index: _prefetch_intrinsic(array, index)
    return None


@intrinsic
def _prefetch_intrinsic(typingctx, array, index):
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array_type, _ = signature.args
        value, position = args
        ary = context.make_array(array_type)(context, builder, value)
        indices = [position] + [
            context.get_constant(types.intp, 0) for _ in range(array_type.ndim - 1)
        ]
        pointer = cgutils.get_item_pointer(
            context, builder, array_type, ary, indices, wraparound=False
        )
        int32 = ir.IntType(32)
        address = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        function = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(
                ir.VoidType(), [ir.IntType(8).as_pointer(), int32, int32, int32]
            ),
            "llvm.prefetch.p0i8",
        )
        # read, high locality, data cache
        builder.call(
            function,
            [address, int32(0), int32(3), int32(1)],
        )
        return context.get_dummy_value()

    return types.void(array, index), codegen
