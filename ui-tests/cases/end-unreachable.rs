// `ping` and `pong` only lead to each other (through a guard), so `end` is never reached from them.
use ctx_macros::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_turn_loops: 3 }
        prompts { answer: "Answer the question from the context." }
        steps {
            search: search_nodes { top_k: 20, next: fetch },
            fetch: fetch_node_texts { max_tokens: 3_000, next: answer },
            answer: call_model { prompt_key: answer, next: ping },
            ping: loop_guard { max_turn_loops_from_settings: max_turn_loops, on_allow: pong, on_deny: pong },
            pong: search_nodes { top_k: 5, next: ping },
        }
    }
}

fn main() {}
