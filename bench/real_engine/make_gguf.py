#!/usr/bin/env python3
"""Writes the bench's model: a small random-weight Llama in GGUF v3, reproducible from a seed.

Python's standard library only. The weights mean nothing (the bench measures how fast an engine
serves tokens, not what it says); the shapes and metadata are those llama.cpp's loader needs
for architecture "llama". The vocabulary is SentencePiece-style (<unk>, <s>, </s>, the 256
<0xNN> byte tokens, then filler pieces) because llama.cpp refuses a model without one, but the
bench's server never uses it: it cuts prompts into 4-byte pieces itself, as kvsweep's simulated
tokenizer does, so both count the same tokens (server.mjs).

usage: make_gguf.py OUT.gguf [--hidden 256] [--layers 4] [--ffn 768] [--heads 4]
                             [--kv-heads 2] [--vocab 512] [--context 4096] [--seed 31]
"""

import argparse
import os
import random
import struct
import sys

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGNMENT = 32

# gguf value types (ggml/include/gguf.h, enum gguf_type)
T_UINT32 = 4
T_INT32 = 5
T_FLOAT32 = 6
T_BOOL = 7
T_STRING = 8
T_ARRAY = 9

# ggml tensor types
GGML_F32 = 0
GGML_F16 = 1

# llama.cpp token types (llama_token_type)
TOKEN_NORMAL = 1
TOKEN_UNKNOWN = 2
TOKEN_CONTROL = 3
TOKEN_BYTE = 6


def gguf_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def kv_entry(key, vtype, value):
    out = gguf_string(key) + struct.pack("<I", vtype)
    if vtype == T_UINT32:
        out += struct.pack("<I", value)
    elif vtype == T_INT32:
        out += struct.pack("<i", value)
    elif vtype == T_FLOAT32:
        out += struct.pack("<f", value)
    elif vtype == T_BOOL:
        out += struct.pack("<?", value)
    elif vtype == T_STRING:
        out += gguf_string(value)
    else:
        raise ValueError(f"kv_entry: type {vtype} is written by kv_array")
    return out


def kv_array(key, elem_type, values):
    out = gguf_string(key) + struct.pack("<I", T_ARRAY) + struct.pack("<IQ", elem_type, len(values))
    if elem_type == T_STRING:
        out += b"".join(gguf_string(v) for v in values)
    elif elem_type == T_FLOAT32:
        out += struct.pack(f"<{len(values)}f", *values)
    elif elem_type == T_INT32:
        out += struct.pack(f"<{len(values)}i", *values)
    else:
        raise ValueError(f"kv_array: element type {elem_type} not used here")
    return out


def vocabulary(size):
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL] + [TOKEN_BYTE] * 256
    if size < len(tokens):
        raise ValueError(f"--vocab must be at least {len(tokens)} (special and byte tokens)")
    # Filler pieces, distinct from each other and from the byte tokens; "\u2581" is SPM's space.
    for i in range(size - len(tokens)):
        tokens.append(f"\u2581w{i}")
        types.append(TOKEN_NORMAL)
    scores = [0.0] * 3 + [0.0] * 256 + [-float(i) for i in range(size - 259)]
    return tokens, scores, types


def f16_noise(rng, count):
    """count random half floats, little-endian, magnitudes about 2^-7 to 2^-3, random sign.

    Random bytes give the sign and mantissa; the high byte of each value is rewritten through a
    256-entry table that puts its exponent in a narrow band, so the work is done by
    bytes.translate rather than a Python loop over millions of values.
    """
    table = bytearray(256)
    for b in range(256):
        sign = b & 0x80
        exponent = 8 + ((b >> 2) & 0x3)  # 8..11: 2^-7 .. 2^-4 times 1.mantissa
        table[b] = sign | (exponent << 2) | (b & 0x03)
    data = bytearray(rng.randbytes(2 * count))
    data[1::2] = bytes(data[1::2]).translate(bytes(table))
    return bytes(data)


def f32_ones(count):
    return struct.pack("<f", 1.0) * count


def build(args):
    rng = random.Random(args.seed)
    n_embd, n_ff, n_layer = args.hidden, args.ffn, args.layers
    n_head, n_head_kv = args.heads, args.kv_heads
    if n_embd % n_head or n_head % n_head_kv:
        raise ValueError("--hidden must be a multiple of --heads, --heads of --kv-heads")
    head_dim = n_embd // n_head
    n_embd_kv = head_dim * n_head_kv
    tokens, scores, types = vocabulary(args.vocab)

    # (name, dims innermost first as ggml's ne, type)
    tensors = [("token_embd.weight", (n_embd, args.vocab), GGML_F16)]
    for i in range(n_layer):
        p = f"blk.{i}."
        tensors += [
            (p + "attn_norm.weight", (n_embd,), GGML_F32),
            (p + "attn_q.weight", (n_embd, n_embd), GGML_F16),
            (p + "attn_k.weight", (n_embd, n_embd_kv), GGML_F16),
            (p + "attn_v.weight", (n_embd, n_embd_kv), GGML_F16),
            (p + "attn_output.weight", (n_embd, n_embd), GGML_F16),
            (p + "ffn_norm.weight", (n_embd,), GGML_F32),
            (p + "ffn_gate.weight", (n_embd, n_ff), GGML_F16),
            (p + "ffn_up.weight", (n_embd, n_ff), GGML_F16),
            (p + "ffn_down.weight", (n_ff, n_embd), GGML_F16),
        ]
    tensors += [
        ("output_norm.weight", (n_embd,), GGML_F32),
        ("output.weight", (n_embd, args.vocab), GGML_F16),
    ]

    kvs = [
        kv_entry("general.architecture", T_STRING, "llama"),
        kv_entry("general.name", T_STRING, "kvsweep-bench-random"),
        kv_entry("general.alignment", T_UINT32, ALIGNMENT),
        kv_entry("general.file_type", T_UINT32, 1),  # LLAMA_FTYPE_MOSTLY_F16
        kv_entry("llama.context_length", T_UINT32, args.context),
        kv_entry("llama.embedding_length", T_UINT32, n_embd),
        kv_entry("llama.block_count", T_UINT32, n_layer),
        kv_entry("llama.feed_forward_length", T_UINT32, n_ff),
        kv_entry("llama.attention.head_count", T_UINT32, n_head),
        kv_entry("llama.attention.head_count_kv", T_UINT32, n_head_kv),
        kv_entry("llama.rope.dimension_count", T_UINT32, head_dim),
        kv_entry("llama.rope.freq_base", T_FLOAT32, 10000.0),
        kv_entry("llama.attention.layer_norm_rms_epsilon", T_FLOAT32, 1e-5),
        kv_entry("llama.vocab_size", T_UINT32, args.vocab),
        kv_entry("tokenizer.ggml.model", T_STRING, "llama"),
        kv_array("tokenizer.ggml.tokens", T_STRING, tokens),
        kv_array("tokenizer.ggml.scores", T_FLOAT32, scores),
        kv_array("tokenizer.ggml.token_type", T_INT32, types),
        kv_entry("tokenizer.ggml.unknown_token_id", T_UINT32, 0),
        kv_entry("tokenizer.ggml.bos_token_id", T_UINT32, 1),
        kv_entry("tokenizer.ggml.eos_token_id", T_UINT32, 2),
        kv_entry("tokenizer.ggml.add_bos_token", T_BOOL, False),
    ]

    infos = b""
    offset = 0
    sizes = []
    for name, dims, ttype in tensors:
        count = 1
        for d in dims:
            count *= d
        nbytes = count * (4 if ttype == GGML_F32 else 2)
        infos += gguf_string(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", ttype, offset)
        sizes.append((count, nbytes, ttype))
        offset += (nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT

    header = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(tensors), len(kvs))
    head = header + b"".join(kvs) + infos
    head += b"\0" * ((-len(head)) % ALIGNMENT)

    tmp = args.out + ".tmp"
    with open(tmp, "wb") as out:
        out.write(head)
        for count, nbytes, ttype in sizes:
            out.write(f32_ones(count) if ttype == GGML_F32 else f16_noise(rng, count))
            out.write(b"\0" * ((-nbytes) % ALIGNMENT))
    os.replace(tmp, args.out)  # a half-written model is never left under the real name
    params = sum(c for c, _, _ in sizes)
    print(f"wrote {args.out}: {params / 1e6:.1f}M parameters, hidden {n_embd}, {n_layer} layers, "
          f"ffn {n_ff}, heads {n_head}/{n_head_kv}, vocab {args.vocab}, seed {args.seed}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--ffn", type=int, default=768)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    try:
        build(args)
    except (ValueError, OSError) as e:
        print(f"make_gguf.py: error: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
