// A zero model window.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 0, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
