// loop_guard reads its limit from a setting that is not declared.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_turn_loops: 3 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, next: guard },
            guard: loop_guard { max_turn_loops_from_settings: max_turn_loop, on_allow: search, on_deny: end },
        }
    }
}

fn main() {}
