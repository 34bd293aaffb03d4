// A loop limit of 0 makes the guard deny every time: its `on_allow` branch can never run.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_turn_loops: 0 }
        prompts { answer: "Answer.", summarizer: "Summarise." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage },
            manage: manage_context_budget { on_ok: answer, on_over: guard },
            guard: loop_guard { max_turn_loops_from_settings: max_turn_loops, on_allow: summarize, on_deny: answer },
            summarize: call_model {
                prompt_key: summarizer,
                user_parts: [ context_blocks => "Context:\n{}" ],
                next: shrink,
            },
            shrink: set_variables { rules: [ context_blocks <- last_model_response | to_context_blocks ], next: manage },
            answer: call_model { prompt_key: answer, next: end },
        }
    }
}

fn main() {}
