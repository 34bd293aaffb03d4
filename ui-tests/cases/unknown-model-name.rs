// A step names a model the pipeline does not declare: one error, at the name, with the nearest.
use ctx::pipeline;

pipeline! {
    pub pipeline Tiered {
        models {
            small { model: "gpt-4o-mini", max_tokens: 200 },
            strong { model: "gpt-4o", max_tokens: 800 },
        }
        settings { max_context_tokens: 4_000 }
        prompts { summarise: "Rewrite the question in one line.", answer: "Answer from the context." }
        steps {
            summarise: call_model { prompt_key: summarise, model: small, next: answer },
            answer: call_model { prompt_key: answer, model: strnog, next: end },
        }
    }
}

// On error the environment is still generated whole, one field per declared model.
fn env<'a>(small: &'a dyn ctx::llm::ChatModelDyn, strong: &'a dyn ctx::llm::ChatModelDyn) -> TieredEnv<'a> {
    TieredEnv { model_small: small, model_strong: strong }
}

fn main() {
    let _ = env;
}
