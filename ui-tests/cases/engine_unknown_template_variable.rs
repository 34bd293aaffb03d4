// Templates may only use the context's declared inputs and its own packs.
ctx::context_engine! {
    fn help_centre {
        contexts {
            support {
                inputs: [question],
                messages: [
                    system: "You are a support agent.",
                    user: "Question: {input.qestion}\n\n{context.faq}",
                ],
            }
        }
    }
}

fn main() {
    let _ = help_centre();
}
