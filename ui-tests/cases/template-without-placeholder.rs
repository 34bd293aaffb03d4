// A user part's template must hold one `{}` for the source's text.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, user_parts: [ user_question => "### User:\n", context_blocks => "{}" ], next: end },
        }
    }
}

fn main() {}
