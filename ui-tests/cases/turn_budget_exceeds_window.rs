// A turn cannot hold more than the model's window.
ctx::turn_budget! {
    fn agent_turn {
        budget_tokens: 300_000,
        context_window: 128_000,
    }
}

fn main() {
    let _ = agent_turn();
}
