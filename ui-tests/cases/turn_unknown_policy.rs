// `on_partial` is `skip`, `truncate` or `compact`.
ctx::turn_budget! {
    fn agent_turn {
        budget_tokens: 100_000,
        context_window: 128_000,
        on_partial: truncat,
    }
}

fn main() {
    let _ = agent_turn();
}
