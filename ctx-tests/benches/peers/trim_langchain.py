"""The Python half of the history-trimming side-by-side (see README.md beside this file).

Reads the conversation the Rust half wrote (history_217k.json), trims it with LangChain's
`trim_messages` to the same budget with exact tiktoken counting (cl100k_base, every message framed
exactly as ctx frames it: see `history_tokens`), checks that tiktoken counts the conversation to
the same total as ctx and reports whether both keep the same messages, and times it.

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


FORMAT = {}


def history_tokens(messages):
    """What the messages add to a request, counted as ctx's `ChatFormat::message_costs` counts
    them (ctx-runtime/src/tokens/chat.rs), with the constants the Rust side exported:

    - a message: its framing, the role and the content, plus its name (with 1 more);
    - an assistant message that only calls tools has no text message of its own; each call is
      framed as OpenAI's harmony format renders it: `assistant`, `commentary to=functions.NAME `,
      `json` and the raw JSON arguments, plus the special tokens around them;
    - a tool result: `functions.NAME to=assistant` (NAME of the call it answers), `commentary`
      and the content, plus the special tokens around them.

    No reply priming: a history is counted without it on the Rust side too."""
    f = FORMAT
    total = 0
    calls = {}
    for m in messages:
        cost = 0
        if isinstance(m, ToolMessage):
            function = calls.get(m.tool_call_id, m.tool_call_id)
            cost += f["tool_result_specials"] + n_tokens(f"functions.{function} to=assistant")
            cost += n_tokens("commentary") + n_tokens(m.content)
        else:
            tool_calls = m.additional_kwargs.get("tool_calls", [])
            if not (isinstance(m, AIMessage) and m.content == "" and tool_calls):
                cost += f["per_message"] + n_tokens(role(m)) + n_tokens(m.content)
            for call in tool_calls:
                name = call["function"]["name"]
                calls[call["id"]] = name
                cost += f["tool_call_specials"] + n_tokens("assistant") + n_tokens(f"commentary to=functions.{name} ")
                cost += n_tokens("json") + n_tokens(call["function"]["arguments"])
        if m.name:
            cost += f["per_name"] + n_tokens(m.name)
        total += cost
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
    FORMAT.update(corpus["chat_format"])
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


if __name__ == "__main__":
    main()
