// The keys read through the model and settings schema rows: a price that is not a number, an
// unknown history trimming policy, a low-water mark out of range, a cost cap that is a string.
// Each error points at its value.
use ctx::pipeline;

pipeline! {
    pub pipeline Qa {
        model {
            context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base,
            price { input: cheap, output: 10 },
        }
        settings {
            max_context_tokens: 9_000, max_history_tokens: 1_000,
            history_trim: newest_first, history_low_water_percent: 150, max_cost_per_run: "lots",
        }
        prompts { answer: "Answer the question from the context." }
        steps { answer: call_model { prompt_key: answer, use_history: true, next: end } }
    }
}

fn main() {}
