// `model("…")` reads the window from the model table when compiling; an unknown model is an error.
ctx::turn_budget! {
    fn agent_turn {
        budget_tokens: 100_000,
        context_window: model("claude-3-opus"),
    }
}

fn main() {
    let _ = agent_turn();
}
