#!/usr/bin/env python3
"""Writes ctx's embedded copies of the OpenAI vocabularies (ctx-tokens/data/*.tokens.zlib).

Input: OpenAI's public rank files `cl100k_base.tiktoken` and `o200k_base.tiktoken` (one
`base64(token) rank` line per token), gzipped as they ship in the bpe-openai crate's source
(`~/.cargo/registry/src/*/bpe-openai-0.3.2/data/`), or any directory holding them. Each file is
checked against the SHA-256 that tiktoken itself checks before it is used.

Output, per encoding, zlib-compressed (level 9): the number of tokens `n` (u32, little-endian),
then the length of every token in rank order (`n` bytes; every token is 1 to 255 bytes), then
the tokens' bytes one after the other in rank order. Ranks must run 0..n with no gap, so the
rank of a token is its position; `tokens/openai_vocab.rs` reads this layout back, and its tests
compare every rank with bpe-openai's and tiktoken-rs's tables.

    scripts/openai-vocab.py [DIR]      # DIR defaults to bpe-openai 0.3.2's data/ in the cargo registry
"""

import base64
import glob
import gzip
import hashlib
import os
import struct
import sys
import zlib

# tiktoken's own checks of the files it downloads (tiktoken_ext/openai_public.py).
SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_dir():
    if len(sys.argv) > 1:
        return sys.argv[1]
    found = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/bpe-openai-0.3.2/data")))
    if not found:
        sys.exit("bpe-openai 0.3.2 is not in the cargo registry: run `cargo fetch`, or pass the directory")
    return found[-1]


def read_ranks(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    return data


def encode(name, data):
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[name]:
        sys.exit(f"{name}: SHA-256 {digest} is not OpenAI's {SHA256[name]}")
    tokens = {}
    for line in data.splitlines():
        if not line:
            continue
        b64, rank = line.split()
        token = base64.b64decode(b64, validate=True)
        rank = int(rank)
        if rank in tokens:
            sys.exit(f"{name}: rank {rank} appears twice")
        tokens[rank] = token
    n = len(tokens)
    if sorted(tokens) != list(range(n)):
        sys.exit(f"{name}: ranks do not run 0..{n} without a gap")
    if len(set(tokens.values())) != n:
        sys.exit(f"{name}: a token appears twice")
    if not all(1 <= len(t) <= 255 for t in tokens.values()):
        sys.exit(f"{name}: a token is empty or longer than 255 bytes")
    raw = struct.pack("<I", n) + bytes(len(tokens[r]) for r in range(n)) + b"".join(tokens[r] for r in range(n))
    return n, raw, zlib.compress(raw, 9)


def main():
    src = source_dir()
    for name in ("cl100k_base", "o200k_base"):
        candidates = [os.path.join(src, name + ".tiktoken.gz"), os.path.join(src, name + ".tiktoken")]
        path = next((p for p in candidates if os.path.exists(p)), None)
        if path is None:
            sys.exit(f"no {name}.tiktoken(.gz) in {src}")
        n, raw, packed = encode(name, read_ranks(path))
        out = os.path.join(ROOT, "ctx-spec", "data", name + ".tokens.zlib")
        with open(out, "wb") as f:
            f.write(packed)
        print(f"{name}: {n} tokens, {len(raw)} bytes, {len(packed)} compressed -> {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
