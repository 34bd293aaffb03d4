// The evidence budget leaves too little of settings.max_context_tokens for the `--- NODE ---`
// frames of the top_k nodes that fill it (issue 26 item 5): the first full search fails the run.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 700 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 10, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 650, next: manage },
            manage: manage_context_budget { on_ok: answer, on_over: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
