// The fallback check compares the final request with a fraction of the window: in (0, 1].
ctx::turn_budget! {
    fn agent_turn {
        budget_tokens: 100_000,
        context_window: 128_000,
        fallback_fraction: 1.5,
    }
}

fn main() {
    let _ = agent_turn();
}
