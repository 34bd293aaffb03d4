// A misspelt setting is named with the closest known one.
ctx::turn_budget! {
    fn agent_turn {
        budget_tokens: 100_000,
        context_window: 128_000,
        min_partial_token: 16,
    }
}

fn main() {
    let _ = agent_turn();
}
