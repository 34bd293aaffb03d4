// A document's block must hold its text, exactly once.
ctx::turn_budget! {
    fn agent_turn {
        budget_tokens: 100_000,
        context_window: 128_000,
        document_template: "<article id=\"{id}\"></article>",
    }
}

fn main() {
    let _ = agent_turn();
}
