"""Reference renderings and counts for tests/model_files.rs, made by llama-cpp-python itself.

For each (chat template, vocabulary) pair and each conversation, this renders the prompt with
llama-cpp-python's own `Jinja2ChatFormatter` (the code its server runs) and counts it with
llama.cpp's tokenizer as the server does (`tokenize(prompt, add_bos=False, special=True)`), from
the vocabulary-only GGUF files of `scripts/model-fixtures.sh`. Messages and tools are written as
ctx's OpenAI client puts them on the wire (a tool-call-only assistant message has `content: null`,
arguments are the JSON string, schema keys in serde_json's order).

    eval "$(scripts/model-fixtures.sh env)"
    ~/.cache/ctx/llama/venv-*/bin/python scripts/template-refs.py > ctx-tokens/tests/data/tokens/model_templates.json
"""

import json
import os
import sys

from llama_cpp import Llama
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

VOCAB = os.environ["CTX_VOCAB_DIR"]

# (template file, vocabulary file or None when llama.cpp ships none for the family, whether the
# rendered text may be stored: the template's license is Apache-2.0 or MIT. Llama 3.1's is Meta's
# community license, so only the rendering's length and count are stored for it.)
PAIRS = [
    ("meta-llama-Llama-3.1-8B-Instruct.jinja", "ggml-vocab-llama-bpe.gguf", False),
    ("Qwen-Qwen2.5-7B-Instruct.jinja", "ggml-vocab-qwen2.gguf", True),  # Apache-2.0
    ("microsoft-Phi-3.5-mini-instruct.jinja", None, True),  # MIT
    ("mistralai-Mistral-Nemo-Instruct-2407.jinja", None, True),  # Apache-2.0
]

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Searches the code base.",
        "parameters": {
            "properties": {"k": {"description": "How many hits.", "type": "integer"},
                           "query": {"description": "Words to find.", "type": "string"}},
            "required": ["query"],
            "type": "object",
        },
    },
}

CONVERSATIONS = [
    ("user only", [{"role": "user", "content": "hi"}], None),
    ("system + user", [{"role": "system", "content": "Be terse."},
                       {"role": "user", "content": "Name three primes."}], None),
    ("multi-turn", [{"role": "system", "content": "You answer about invoices."},
                    {"role": "user", "content": "What is a net total?"},
                    {"role": "assistant", "content": "The sum of quantity times unit price."},
                    {"role": "user", "content": "And the tax?"}], None),
    ("seams and unicode", [{"role": "user", "content": "  leading\n\n\ntrailing  \n ünïcødé 日本語 🎉 — ½ €"}], None),
    ("tools offered", [{"role": "system", "content": "Use tools."},
                       {"role": "user", "content": "Find the tax code."}], [SEARCH]),
    ("tool call and result", [{"role": "user", "content": "Find the tax code."},
                              {"role": "assistant", "content": None, "tool_calls": [
                                  {"id": "call_1", "type": "function",
                                   "function": {"name": "search", "arguments": "{\"query\":\"tax\"}"}}]},
                              {"role": "tool", "content": "{\"hits\": 3}", "tool_call_id": "call_1"}], [SEARCH]),
]


def main():
    cases = []
    for template_file, vocab_file, store_text in PAIRS:
        source = open(os.path.join(VOCAB, "templates", template_file), encoding="utf-8").read()
        llm = None
        bos = eos = ""
        if vocab_file:
            llm = Llama(model_path=os.path.join(VOCAB, vocab_file), vocab_only=True, verbose=False)
            bos = llm._model.token_get_text(llm.token_bos()) if llm.token_bos() != -1 else ""
            eos = llm._model.token_get_text(llm.token_eos()) if llm.token_eos() != -1 else ""
        formatter = Jinja2ChatFormatter(template=source, eos_token=eos, bos_token=bos)
        for name, messages, tools in CONVERSATIONS:
            try:
                prompt = formatter(messages=messages, tools=tools).prompt
            except Exception as e:  # the template refuses this conversation
                cases.append({"template": template_file, "vocab": vocab_file, "conversation": name,
                              "error": str(e)})
                continue
            count = len(llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)) if llm else None
            case = {"template": template_file, "vocab": vocab_file, "bos": bos, "eos": eos,
                    "conversation": name, "rendered_chars": len(prompt), "count": count}
            if store_text:
                case["rendered"] = prompt
            cases.append(case)
    note = ("Renderings by llama-cpp-python 0.3.36's Jinja2ChatFormatter and counts by llama.cpp's tokenizer "
            "(tokenize(add_bos=False, special=True)) of the chat templates and vocabulary-only GGUF files in "
            "llama-cpp-python's source distribution (scripts/model-fixtures.sh). Rendered texts are stored only for "
            "templates under Apache-2.0 (Qwen 2.5, Mistral Nemo) or MIT (Phi-3.5); for Llama 3.1 (Meta's community "
            "license) only the length and count.")
    json.dump({"generator": "scripts/template-refs.py", "note": note, "cases": cases}, sys.stdout,
              ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
