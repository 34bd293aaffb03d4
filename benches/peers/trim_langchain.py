"""The Python half of the history-trimming side-by-side (see README.md beside this file).

Reads the conversation the Rust half wrote (history_217k.json), trims it with LangChain's
`trim_messages` to the same budget with exact tiktoken counting (cl100k_base, the OpenAI chat
format's 3 tokens a message and 1 a name, tool calls counted as their name and JSON arguments,
exactly as ctx counts them), checks that it keeps the same messages as ctx, and times it.

Usage: python trim_langchain.py <dir with history_217k.json> [runs]
Writes <dir>/peers_python.json: every sample in seconds, with median and median absolute deviation.
"""

import json
import os
import platform
import statistics
import sys
import time

import langchain_core
import tiktoken
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, trim_messages

ENC = tiktoken.get_encoding("cl100k_base")


def n_tokens(text):
    # Special-token text (`<|endoftext|>`) is ordinary text, as in ctx.
    return len(ENC.encode(text, disallowed_special=())) if text else 0


def role(message):
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ToolMessage):
        return "tool"
    return "system"


def history_tokens(messages):
    """What the messages add to a request: 3 per message, the role, the content, a name (+1), each
    tool call's name and raw JSON arguments, a result's call id. No reply priming (a history is
    counted without it on the Rust side too)."""
    total = 0
    for m in messages:
        total += 3 + n_tokens(role(m)) + n_tokens(m.content)
        if m.name:
            total += 1 + n_tokens(m.name)
        for call in m.additional_kwargs.get("tool_calls", []):
            total += n_tokens(call["function"]["name"]) + n_tokens(call["function"]["arguments"])
        if isinstance(m, ToolMessage):
            total += n_tokens(m.tool_call_id)
    return total


def to_langchain(m):
    name = m.get("name")
    if m["role"] == "user":
        return HumanMessage(content=m["content"], name=name)
    if m["role"] == "system":
        return SystemMessage(content=m["content"], name=name)
    if m["role"] == "tool":
        return ToolMessage(content=m["content"], tool_call_id=m["tool_call_id"], name=name)
    calls = m.get("tool_calls", [])
    return AIMessage(
        content=m["content"],
        name=name,
        tool_calls=[{"id": c["id"], "name": c["name"], "args": json.loads(c["arguments"]), "type": "tool_call"} for c in calls],
        # The raw arguments as the model produced them: what is sent, so what is counted.
        additional_kwargs={
            "tool_calls": [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        }
        if calls
        else {},
    )


def trim(messages, max_tokens):
    # The recommended settings for a chat history: keep the newest, never start on a tool result
    # (start on a user or assistant message), no partial messages.
    return trim_messages(
        messages,
        max_tokens=max_tokens,
        token_counter=history_tokens,
        strategy="last",
        start_on=("human", "ai"),
        allow_partial=False,
    )


def mad(samples):
    median = statistics.median(samples)
    return statistics.median(abs(s - median) for s in samples)


def main():
    out = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with open(os.path.join(out, "history_217k.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    messages = [to_langchain(m) for m in corpus["messages"]]
    max_tokens = corpus["max_tokens"]
    expected = corpus["expected"]

    total = history_tokens(messages)
    if total != corpus["total_tokens"]:
        sys.exit(f"tiktoken counts {total} tokens, ctx counted {corpus['total_tokens']}: not the same counting")
    kept = trim(messages, max_tokens)
    kept_tokens = history_tokens(kept)
    same = len(kept) == expected["kept_messages"] and kept_tokens == expected["kept_tokens"]

    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        trim(messages, max_tokens)
        samples.append(time.perf_counter() - start)
    count_samples = []
    for _ in range(runs):
        start = time.perf_counter()
        history_tokens(messages)
        count_samples.append(time.perf_counter() - start)

    result = {
        "python": platform.python_version(),
        "langchain_core": langchain_core.__version__,
        "tiktoken": tiktoken.__version__,
        "messages": len(messages),
        "total_tokens": total,
        "max_tokens": max_tokens,
        "kept_messages": len(kept),
        "kept_tokens": kept_tokens,
        "same_as_ctx": same,
        "benchmarks": {
            "langchain_trim_messages_tiktoken": {"samples_s": samples, "median_s": statistics.median(samples), "mad_s": mad(samples)},
            "tiktoken_count_once": {"samples_s": count_samples, "median_s": statistics.median(count_samples), "mad_s": mad(count_samples)},
        },
    }
    with open(os.path.join(out, "peers_python.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    print(
        f"langchain-core {langchain_core.__version__} trim_messages (tiktoken {tiktoken.__version__}): "
        f"{len(messages)} messages, {total} tokens -> kept {len(kept)} messages, {kept_tokens} tokens "
        f"({'same as' if same else 'DIFFERENT from'} ctx: {expected['kept_messages']} messages, {expected['kept_tokens']} tokens); "
        f"median {statistics.median(samples) * 1e3:.1f} ms over {runs} runs"
    )
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
