// A threshold is a fraction of max_context_tokens in (0, 1].
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage },
            manage: manage_context_budget {
                compact_code: [
                    { language: sql, policy: threshold, threshold: 1.5 },
                ],
                on_ok: answer,
                on_over: answer,
            },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
