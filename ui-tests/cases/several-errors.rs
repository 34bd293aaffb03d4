// Syntax and pipeline errors of one invocation are reported together, each under its token.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        prompts { answer: "Answer." }
        steps {
            search: search_nodes { top_k: 0, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, nxt: manage },
            manage: manage_context_budget {
                compact_code: [ { language: sql, policy: threshold, threshold: 2.0 } ],
                on_ok: answer,
                on_over: answr,
            },
            answer: call_model {
                prompt_key: answer,
                user_parts: [ user_question => "no placeholder" ],
                use_history: "yes",
                next: end,
            },
        }
    }
}

fn main() {
    // The step enum is still generated, so code using it reports no follow-on error.
    let _ = QaStep::Search;
}
