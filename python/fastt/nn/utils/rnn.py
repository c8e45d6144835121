"""fastt.nn.utils.rnn: PackedSequence and the padding/packing helpers, as
torch's. Packing and unpacking are one index_select / index_copy each
(differentiable); the recurrent layers consume the packed rows directly
(csrc/ops/rnn.h runs batch_sizes[t] rows at step t)."""

from collections import namedtuple

import fastt

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence",
           "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple(
    "PackedSequence",
    ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """Variable-length sequences packed time-major: data holds
    batch_sizes[t] rows for step t; sorted_indices orders the batch by
    decreasing length (None when it already was)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None,
                unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of "
                    "PackedSequence should never be created manually. They "
                    "should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in "
                    "nn.utils.rnn. https://pytorch.org/docs/stable/"
                    "nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices,
                                   unsorted_indices)
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise ValueError("PackedSequence: expected (data, batch_sizes)")
        return super().__new__(cls, data[0], data[1], sorted_indices,
                               unsorted_indices)

    def _with(self, fn, indices_too=False):
        data = fn(self.data)
        if data is self.data:
            return self
        si, ui = self.sorted_indices, self.unsorted_indices
        if indices_too and si is not None:
            si = si.to(device=data.device)
            ui = ui.to(device=data.device)
        return type(self)(data, self.batch_sizes, si, ui)

    def to(self, *args, **kwargs):
        return self._with(lambda d: d.to(*args, **kwargs), True)

    def cuda(self, *args, **kwargs):
        return self._with(lambda d: d.cuda(*args, **kwargs), True)

    def cpu(self, *args, **kwargs):
        return self._with(lambda d: d.cpu(*args, **kwargs), True)

    def double(self):
        return self.to(dtype=fastt.float64)

    def float(self):
        return self.to(dtype=fastt.float32)

    def half(self):
        return self.to(dtype=fastt.float16)

    def long(self):
        return self.to(dtype=fastt.int64)

    def int(self):
        return self.to(dtype=fastt.int32)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = fastt.empty_like(permutation)
    output.scatter_(0, permutation,
                    fastt.arange(0, permutation.numel(),
                                 device=permutation.device))
    return output


def _lengths_list(lengths):
    if isinstance(lengths, fastt.Tensor):
        if lengths.dim() != 1:
            raise ValueError("lengths should be a 1D tensor or a list")
        return [int(v) for v in lengths.cpu().tolist()]
    return [int(v) for v in lengths]


def _packed_rows(batch_sizes, B):
    """Row indices of the packed rows in a time-major [T * B] layout."""
    idx = []
    for t, bs in enumerate(batch_sizes):
        idx.extend(range(t * B, t * B + bs))
    return fastt.tensor(idx, dtype=fastt.int64)


def pack_padded_sequence(input, lengths, batch_first=False,
                         enforce_sorted=True):
    """Packs a padded batch [T, B, *] (or [B, T, *]) of sequences with the
    given lengths."""
    lens = _lengths_list(lengths)
    if enforce_sorted:
        if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False`"
                " to pack_padded_sequence and/or pack_sequence to sidestep "
                "this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = fastt.tensor(order, dtype=fastt.int64,
                                      device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    T, B = input.size(0), input.size(1)
    if len(lens) != B:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{len(lens)} (batch_size={B})")
    if lens and lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an "
            "element in 'lengths' that is <= 0")
    if lens and lens[0] > T:
        raise RuntimeError(
            f"Expected the longest length ({lens[0]}) to be at most the "
            f"padded sequence length ({T})")
    batch_sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])] \
        if lens else []
    rows = _packed_rows(batch_sizes, B).to(input.device)
    flat = input.reshape(T * B, *input.shape[2:])
    data = flat.index_select(0, rows)
    return PackedSequence(data, fastt.tensor(batch_sizes, dtype=fastt.int64),
                          sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0,
                        total_length=None):
    """Inverse of pack_padded_sequence: (padded, lengths)."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    T = len(batch_sizes)
    B = batch_sizes[0] if batch_sizes else 0
    if total_length is not None:
        if total_length < T:
            raise ValueError(
                "Expected total_length to be at least the length of the "
                "longest sequence in input, but got total_length="
                f"{total_length} and max sequence length being {T}")
    else:
        total_length = T
    data = sequence.data
    rows = _packed_rows(batch_sizes, B).to(data.device)
    padded = fastt.full((total_length * B,) + tuple(data.shape[1:]),
                        padding_value, dtype=data.dtype, device=data.device)
    padded = padded.index_copy(0, rows, data)
    padded = padded.view(total_length, B, *data.shape[1:])
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(B)]
    lengths = fastt.tensor(lengths, dtype=fastt.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(
            0, sequence.unsorted_indices.to(lengths.device))
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0,
                 padding_side="right"):
    """Stacks sequences [L_i, *] padded to the longest: [T, B, *] (or
    [B, T, *] when batch_first)."""
    if padding_side not in ("left", "right"):
        raise ValueError("Expected padding_side to be one of left or right, "
                         f"but got {padding_side}.")
    if isinstance(sequences, fastt.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    T = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        extra = T - s.size(0)
        if extra:
            pad = [0, 0] * (s.dim() - 1)
            pad += [extra, 0] if padding_side == "left" else [0, extra]
            s = fastt.nn.functional.pad(s, pad, value=padding_value)
        padded.append(s)
    out = fastt.stack(padded, 0)
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences,
                                      _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences [L_i, *]."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence (pack_sequence's
    inverse)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
