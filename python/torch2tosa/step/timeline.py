"""Where each hop of a step graph sits on the whole sequence's time line, and how much state
a layer keeps for it.

A value along time in the step graph is a `Seq`: hop h carries frames

    [h*F - D, (h+1)*F - D)

of the whole-sequence value (F frames per hop, delay D). Frames with index < 0 do not exist
in the whole-sequence model: in the stream they are warm-up frames made from the zero state,
which no real frame may read (a layer's state is refilled when they have passed: the
`reset` of each state below). Frames [0, Z) are zeros in the whole-sequence value (a zero
padding at the start, e.g. `F.pad(x, (k-1, 0))` before a conv); D < 0 means the stream
skips them (they live in the next layer's initial state), and when D > -Z the stream
carries them as warm-up frames too.

A sliding window (Conv1d, a pool) with span R = d(k-1)+1, stride s and left padding pl,
on an input (F, D, Z), keeps the last S input frames of the previous hops (a shift
buffer):

    buffer = concat(state, hop)          S + F frames, buffer[0] = frame h*F - D - S
    y      = window(buffer[:(F/s - 1)*s + R])   no padding along time
    state' = buffer[-S:]

Output frame k of the hop reads buffer[k*s, k*s + R), that is whole-sequence output
j = h*F/s + k - D', with D' = (D + S - pl)/s: so S must make D + S - pl a multiple of s,
S >= R - s (the window sees its whole span) and S >= pl + Z (the padding and the zero
frames fit in the state, which a fresh stream fills with the padding value). The first
hop with real outputs is h0 = floor(D'/(F/s)); its input frames must all be real
(h0*F - D >= Z), and at its start the state's frames before Z are refilled. The smallest
such S is the fewest state bytes and the shortest delay.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nodes import Window


@dataclass(frozen=True)
class Seq:
    """A value along time in the step graph: time `axis`, `frames` F per hop, the whole
    sequence's `length`, delay D and zero frames Z (module docstring)."""


    axis: int
    frames: int
    length: int
    delay: int = 0
    zeros: int = 0
    raw: bool = False  # the model's input, moved only: zero in a zero hop after the input
    tail: int = 0  # last frames a fresh stream may compute otherwise (rewrite._tail)


@dataclass(frozen=True)
class Buffer:
    """A shift buffer's plan: `state` frames kept, the output's delay, the hop at whose start
    a fresh stream refills the state's first `reset_frames` frames (0, 0: never)."""

    state: int
    delay: int
    reset_hop: int = 0
    reset_frames: int = 0


def window_buffer(w: Window, frames: int, delay: int, zeros: int) -> Buffer:
    """The shift buffer of a sliding window on input (frames, delay, zeros): module docstring."""
    out_frames = frames // w.stride
    state = max(w.span - w.stride, w.left + zeros, 0)
    while True:
        if (delay + state - w.left) % w.stride == 0:
            out_delay = (delay + state - w.left) // w.stride
            first = out_delay // out_frames
            start = first * frames - delay  # index of the first frame of hop `first`'s input
            if start >= zeros:
                return Buffer(state, out_delay, *_reset(first, start - state, zeros, state, delay))
        state += 1


def transpose_buffer(kernel_span: int, stride: int, padding: int, frames: int,
                     delay: int) -> tuple[Buffer, int]:
    """(the shift buffer, the slice start) of a transposed convolution on input (frames,
    delay, no zero frames). Input frame t adds into outputs t*s - p + [0, span): output o
    reads inputs ceil((o + p - span + 1)/s) .. floor((o + p)/s). Hop h's outputs
    [h*F*s - D', ...) need D' >= p + D*s (its newest input has arrived) and
    m = floor((D' - p + span - 1)/s) - D older input frames; they are
    y[start : start + F*s] of conv_transpose(concat(state, hop)) with no padding,
    start = (D + m)*s + p - D'. The first hop with real outputs must read no warm-up input."""
    out_frames = frames * stride
    out_delay = padding + delay * stride
    while True:
        first = out_delay // out_frames
        if first * frames - delay >= 0:
            break
        out_delay += 1
    state = (out_delay - padding + kernel_span - 1) // stride - delay
    start = (delay + state) * stride + padding - out_delay
    reset = _reset(first, first * frames - delay - state, 0, state, delay)
    return Buffer(state, out_delay, *reset), start


def delay_line(frames: int, delay: int, zeros: int, align: bool) -> Buffer:
    """A delay line (a shift buffer whose output is its oldest F frames) that turns a value
    (frames, delay, zeros) into one with no zero frames and delay >= 0 (a multiple of F with
    `align`): L = r*F - D frames with r the first hop by which the carried zero frames
    have all arrived; at its start they are refilled. Buffer(0, delay) if none is needed."""
    if zeros == 0 and delay >= 0 and (not align or delay % frames == 0):
        return Buffer(0, delay)
    first = max(0, -(-(zeros + delay) // frames))
    if align:
        first = max(first, -(-delay // frames))
    length = first * frames - delay
    if zeros == 0:
        return Buffer(length, first * frames)
    return Buffer(length, first * frames, *_reset(first, 0, zeros, length, delay))


def _reset(hop: int, first_index: int, zeros: int, state: int, delay: int) -> tuple[int, int]:
    """(hop, frames): at hop `hop`'s start the state holds frames first_index.. ; those with
    index < zeros (the padding, the zero frames, the warm-up frames before them) are
    refilled. None is needed at hop 0 (the fresh state is all fill), nor when the stream
    carries no frame before `zeros` (it starts at frame -delay)."""
    frames = min(max(zeros - first_index, 0), state)
    if hop == 0 or frames == 0 or -delay >= zeros:
        return 0, 0
    return hop, frames
