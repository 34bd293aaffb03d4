"""The Python half of the counting side-by-side (ctx-tokens/benches/peers_count.rs): quicktok, driven line by line.

Reads the texts the Rust half wrote (a JSON list), loads the quicktok encodings named on the
command line, then answers one command per line on stdin:

    counts NAME   -> a JSON list: quicktok's count of every text (checked against ctx's)
    time NAME     -> "COUNT NANOS": one count of all texts joined, timed in this thread's CPU time

The Rust half interleaves these timings with its own, round by round, so load on the machine
falls on both alike.
"""

import json
import sys
import time

import quicktok


def main() -> None:
    texts = json.load(open(sys.argv[1], encoding="utf-8"))
    whole = "".join(texts)
    encodings = {name: quicktok.get_encoding(name) for name in sys.argv[2:]}
    print("ready", quicktok.__version__, flush=True)
    for line in sys.stdin:
        command, name = line.split()
        encoding = encodings[name]
        if command == "counts":
            print(json.dumps([encoding.count(t) for t in texts]), flush=True)
        elif command == "time":
            start = time.thread_time_ns()
            n = encoding.count(whole)
            print(n, time.thread_time_ns() - start, flush=True)
        else:
            raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
