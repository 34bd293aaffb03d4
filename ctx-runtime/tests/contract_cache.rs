//! The contract is recomputed only when one of its inputs changes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctx_runtime::config::{LimitsPolicy, ModelConfig, Settings};
use ctx_runtime::contract::{
    ContractCache, ContractCacheStats, Fingerprint, FingerprintBuilder, call_model_checks, check_contract,
    pipeline_uses_history,
};
use ctx_runtime::pipeline::{
    CallModelSpec, END, ModelSource, ModelSpec, PipelineDef, PromptSpec, SettingsSpec, StepDef, StepKind, UserPartSpec,
};
use ctx_runtime::{ChatFormat, FieldPath};

fn definition() -> PipelineDef {
    let call = |prompt: &str, out: i64, history: bool| {
        StepKind::CallModel(
            CallModelSpec::new(prompt, END)
                .max_output_tokens(Some(out))
                .user_parts(vec![
                    UserPartSpec::new("context_blocks", "### Context:\n{}\n\n"),
                    UserPartSpec::new("user_question_en", "### User:\n{}\n\n"),
                ])
                .use_history(history),
        )
    };
    PipelineDef::new("CodeQa")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(16_384))
                .max_tokens(Some(1_024))
                .encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(9_000))
                .max_history_tokens(Some(2_000))
                .budget_safety_margin_tokens(Some(128))
                .extra(BTreeMap::from([("max_turn_loops".to_owned(), 3)])),
        )
        .prompts(vec![
            PromptSpec::default().key("answer".into()),
            PromptSpec::new("summarizer", Some("Summarise the context; keep SQL verbatim.".into())),
        ])
        .steps(vec![
            StepDef::new("summarize", call("summarizer", 2_000, false)),
            StepDef::new("answer", call("answer", 1_000, true)),
        ])
}

struct Inputs {
    def: PipelineDef,
    prompts: BTreeMap<String, String>,
    model: ModelConfig,
    settings: Settings,
}

fn inputs() -> Inputs {
    let def = definition();
    let ModelSource::Inline(spec) = &def.model else { unreachable!("inline model") };
    let model = ModelConfig::from_spec(spec, &FieldPath::root().key("model")).unwrap();
    let settings =
        Settings::from_spec(&def.settings, pipeline_uses_history(&def), &FieldPath::root().key("settings")).unwrap();
    let prompts = BTreeMap::from([("answer".to_owned(), "Answer from the context only.".to_owned())]);
    Inputs { def, prompts, model, settings }
}

fn fingerprint(i: &Inputs) -> Fingerprint {
    Fingerprint::of(&i.def, &i.prompts, &i.model, &i.settings, &i.model.counter()).unwrap()
}

#[test]
fn every_input_changes_the_fingerprint() {
    let base = inputs();
    let reference = fingerprint(&base);
    assert_eq!(fingerprint(&inputs()), reference, "equal inputs, equal fingerprints");

    let mut changed: Vec<(&str, Inputs)> = Vec::new();
    let mut i = inputs();
    if let StepKind::CallModel(c) = &mut i.def.steps[0].kind {
        c.max_output_tokens = Some(1_999);
    }
    changed.push(("a step's output limit", i));
    let mut i = inputs();
    if let StepKind::CallModel(c) = &mut i.def.steps[1].kind {
        c.user_parts[1].template = "### Question:\n{}\n\n".into();
    }
    changed.push(("a user template", i));
    let mut i = inputs();
    i.def.settings.max_context_tokens = Some(8_999);
    changed.push(("a setting in the definition", i));
    let mut i = inputs();
    i.def.prompts[1].text = Some("Summarise the context.".into());
    changed.push(("an inline prompt", i));
    let mut i = inputs();
    i.prompts.insert("answer".into(), "Answer from the context only!".into());
    changed.push(("a prompt file", i));
    let mut i = inputs();
    i.model.context_window = 16_383;
    changed.push(("the window", i));
    let mut i = inputs();
    i.model.encoding = ctx_runtime::Encoding::O200kBase;
    changed.push(("the encoding", i));
    let mut i = inputs();
    i.model.max_tokens = None;
    changed.push(("the model's output limit", i));
    let mut i = inputs();
    i.settings.policy = LimitsPolicy::AutoClamp;
    changed.push(("the policy", i));

    let mut seen = vec![reference];
    for (what, i) in &changed {
        let f = fingerprint(i);
        assert!(!seen.contains(&f), "changing {what} did not change the fingerprint");
        seen.push(f);
    }

    // The chat format and extra source files are inputs too.
    let b = inputs();
    let counter = b.model.counter();
    let with = |c: &ctx_runtime::TokenCounter| Fingerprint::of(&b.def, &b.prompts, &b.model, &b.settings, c).unwrap();
    assert_ne!(with(&counter), with(&counter.clone().with_format(ChatFormat::openai_gpt4())));
    let file =
        |text: &[u8]| FingerprintBuilder::new().pipeline(&b.def).unwrap().source_file("base.yaml", text).finish();
    assert_eq!(file(b"a: 1"), file(b"a: 1"));
    assert_ne!(file(b"a: 1"), file(b"a: 2"));
    // Parts are delimited: moving bytes from one part to the next is a change.
    let split = |k: &str, t: &str| FingerprintBuilder::new().prompt(k, t).finish();
    assert_ne!(split("ab", "c"), split("a", "bc"));
    assert_eq!(reference.to_string().len(), 32);
}

#[test]
fn the_cache_recomputes_only_on_a_new_fingerprint() {
    let cache = ContractCache::default();
    let runs = AtomicUsize::new(0);
    let run = |i: &Inputs| {
        let checks = call_model_checks(&i.def, &i.prompts).unwrap();
        let outcome = cache.get_or_check(fingerprint(i), || {
            runs.fetch_add(1, Ordering::SeqCst);
            check_contract(&i.model, &i.settings, &checks, &i.model.counter())
        });
        outcome.as_ref().as_ref().map(|r| r.max_context_tokens).map_err(|e| e.len())
    };

    let base = inputs();
    assert_eq!(run(&base), Ok(9_000));
    assert_eq!(run(&base), Ok(9_000));
    assert_eq!(run(&inputs()), Ok(9_000));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(cache.stats(), ContractCacheStats { hits: 2, misses: 1 });

    // A changed prompt file is a new fingerprint; going back finds the first outcome again.
    let mut edited = inputs();
    edited.prompts.insert("answer".into(), "Answer briefly. ".repeat(2_000));
    assert_eq!(run(&edited), Err(1), "the longer prompt breaks the answer step");
    assert_eq!(run(&edited), Err(1));
    assert_eq!(run(&base), Ok(9_000));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(cache.stats(), ContractCacheStats { hits: 4, misses: 2 });
}

#[test]
fn a_prompt_without_text_is_reported_under_its_step() {
    let i = inputs();
    let err = call_model_checks(&i.def, &BTreeMap::new()).unwrap_err();
    let found: Vec<_> = err.iter().map(|e| (e.code.as_str(), e.path.to_string())).collect();
    assert_eq!(found, [("MISSING_PROMPT_TEXT", "steps.answer.prompt_key".to_owned())]);
    let checks = call_model_checks(&i.def, &i.prompts).unwrap();
    let ids: Vec<_> = checks.iter().map(|c| (c.step_id, c.system_prompt)).collect();
    assert_eq!(
        ids,
        [("summarize", "Summarise the context; keep SQL verbatim."), ("answer", "Answer from the context only.")]
    );
}
