"""The registry of torch2tosa passes: the one list the driver, the pipeline and the docs read.

Each entry is a `PassInfo` defined in its own module, named for what it does.
Order here is the order `--list-passes` and the docs show.
"""

from __future__ import annotations

from ..support.pass_base import PassInfo
from . import conv1d_to_conv2d, decompose_gru, fold_batch_norm, insert_region_constants
from . import (convert_io_to_channels_last, decompose_add_sub_alpha, decompose_long_concat,
               fold_layout)
from . import convert_io_to_integer, convert_quantized_ops, verify_integer_graph, verify_no_int64
from . import convert_constant_index, decompose_lstm, decompose_pow, decompose_rnn
from . import convert_int32_to_f32, convert_strided_conv, insert_output_copies, split_recurrent_layers
from . import convert_dilated_conv, fold_conv_pad, insert_concat_clamps, insert_table_input_copies

REGISTRY: dict[str, PassInfo] = {
    p.flag: p
    for p in (
        decompose_add_sub_alpha.PASS,
        decompose_pow.PASS,
        convert_constant_index.PASS,
        fold_batch_norm.PASS,
        convert_io_to_integer.PASS,
        convert_quantized_ops.PASS,
        verify_integer_graph.PASS,
        conv1d_to_conv2d.PASS,
        split_recurrent_layers.PASS,
        decompose_gru.PASS,
        decompose_lstm.PASS,
        decompose_rnn.PASS,
        insert_region_constants.PASS,
        insert_output_copies.PASS,
        insert_table_input_copies.PASS,
        insert_concat_clamps.PASS,
        convert_io_to_channels_last.PASS,
        fold_layout.PASS,
        fold_conv_pad.PASS,
        convert_strided_conv.PASS,
        convert_dilated_conv.PASS,
        convert_int32_to_f32.PASS,
        decompose_long_concat.PASS,
        verify_no_int64.PASS,
    )
}


def lookup(flag: str) -> PassInfo | None:
    return REGISTRY.get(flag)
