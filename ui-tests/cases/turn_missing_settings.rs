// `budget_tokens` and `context_window` are required; the finding is the runtime's, placed on the
// function's name.
ctx::turn_budget! {
    fn agent_turn {
        on_partial: truncate,
    }
}

fn main() {
    let _ = agent_turn();
}
