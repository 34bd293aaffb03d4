// `#[ctx(…)]` takes one option, `crate = path`; anything else is reported under its name.
ctx::pipeline! {
    #[ctx(krate = ::ctx)]
    pub pipeline Qa {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 9_000 }
        steps {
            finish: set_variables { rules: [ answered = true ], next: end },
        }
    }
}

fn main() {}
