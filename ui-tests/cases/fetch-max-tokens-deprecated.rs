// `max_tokens` in `fetch_node_texts` still works, with a deprecation warning at the key (made an
// error here so that the case records it).
#![deny(deprecated)]
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { max_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
