// An unused private pipeline is one `dead_code` warning (here denied) at the pipeline's name,
// whether or not it has custom steps: not one per generated item, nor one naming an outcome
// enum at a step id.
#![deny(dead_code)]

mod plain {
    ctx::pipeline! {
        pipeline Plain {
            model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
            settings { max_context_tokens: 9_000 }
            steps {
                finish: set_variables { rules: [ last_model_response = "done" ], next: end },
            }
        }
    }
}

mod routed {
    ctx::pipeline! {
        pipeline Router {
            model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
            settings { max_context_tokens: 9_000 }
            steps {
                route: custom { outcomes { simple => finish, complex => finish } },
                finish: set_variables { rules: [ last_model_response = "done" ], next: end },
            }
        }
    }
}

fn main() {}
