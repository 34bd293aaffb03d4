// `ping` and `pong` only lead to each other (the guard's on_deny goes back into the loop), so a
// run that enters them never reaches `end`.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000, max_turn_loops: 3 }
        prompts { answer: "Answer the question from the context." }
        steps {
            route: custom { outcomes { simple => answer, search => ping } },
            answer: call_model { prompt_key: answer, next: end },
            ping: loop_guard { max_turn_loops_from_settings: max_turn_loops, on_allow: pong, on_deny: pong },
            pong: search_nodes { top_k: 5, next: ping },
        }
    }
}

fn main() {}
