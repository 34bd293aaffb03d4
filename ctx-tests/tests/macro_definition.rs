//! The definition `pipeline!` generates is the one it checked, key for key, through the schema
//! rows the decoder read it with: here the keys that came to the macro with those rows alone
//! (`history_trim`, `history_low_water_percent`, `max_cost_per_run`, the model's `price`), with
//! no code of the macro's own for any of them.

use ctx::definition::{ModelSource, PriceSpec, StepKind};
use ctx::pipeline::StepMachine;

ctx::pipeline! {
    /// Answers with history folded at 60 %, at most five cents a run.
    pub pipeline Frugal {
        model {
            context_window: 16_384, max_tokens: 512, encoding: cl100k_base,
            price { input: 2.5, cached_input: 1.25, output: 10 },
        }
        settings {
            max_context_tokens: 4_000, max_history_tokens: 1_000,
            history_trim: fold, history_low_water_percent: 60, max_cost_per_run: 0.05,
            max_turn_loops: 1, max_question_tokens: 1_000,
        }
        prompts { answer: "Answer." }
        steps {
            answer: call_model { prompt_key: answer, use_history: true, top_p: 0.9, next: again },
            again: loop_guard { max_turn_loops_from_settings: max_turn_loops, on_allow: answer, on_deny: end },
        }
    }
}

#[test]
fn the_generated_definition_holds_every_key_written() {
    let def = FrugalStep::definition();
    let ModelSource::Inline(model) = &def.model else { panic!("{:?}", def.model) };
    let price = PriceSpec::default().input(Some(2.5)).cached_input(Some(1.25)).output(Some(10.0));
    assert_eq!(model.price, Some(price));
    assert_eq!((model.context_window, model.encoding.as_deref()), (Some(16_384), Some("cl100k_base")));
    let s = &def.settings;
    assert_eq!((s.history_trim.as_deref(), s.history_low_water_percent), (Some("fold"), Some(60)));
    assert_eq!((s.max_cost_per_run, s.extra.get("max_turn_loops")), (Some(0.05), Some(&1)));
    let StepKind::CallModel(call) = &def.steps[0].kind else { panic!("{:?}", def.steps[0]) };
    assert_eq!((call.use_history, call.params.top_p, call.next.as_str()), (true, Some(0.9), "again"));
}
