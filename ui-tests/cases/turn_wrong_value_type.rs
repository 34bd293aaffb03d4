// Values of the wrong type are reported once, under the value; values of the right type are still
// judged by the runtime's rules.
ctx::turn_budget! {
    fn agent_turn {
        budget_tokens: "100k",
        context_window: 128_000,
        min_partial_tokens: -1,
        on_partial: "skip",
    }
}

fn main() {
    let _ = agent_turn();
}
