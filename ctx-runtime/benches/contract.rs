//! What the contract costs per request: recomputing it with cold token counts (what a check on
//! every request without any cache costs), recomputing it with the shared count cache warm, and
//! the fingerprint + [`ContractCache`] hit that a driver pays when nothing changed.
//!
//! The fingerprint is meant to be taken when inputs are (re)loaded, not per request: with the
//! count cache warm, recomputing is already cheap, and the cache's job is to make sure nothing
//! is re-tokenized (or re-warned) while the inputs stay the same.
//!
//! Run briefly: `cargo bench -p ctx-runtime --bench contract -- --warm-up-time 1 --measurement-time 3`.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use ctx_runtime::config::{ModelConfig, Settings};
use ctx_runtime::contract::{ContractCache, Fingerprint, call_model_checks, check_contract, pipeline_uses_history};
use ctx_runtime::pipeline::{
    CallModelSpec, END, ModelSource, ModelSpec, PipelineDef, PromptSpec, SettingsSpec, StepDef, StepKind, UserPartSpec,
};
use ctx_runtime::tokens::{BpeBackend, ChatFormat, TokenCounter};
use ctx_runtime::{Encoding, FieldPath};

/// A pipeline with three `call_model` steps and prompts of realistic length (the answer prompt
/// is a few thousand tokens of instructions, as production prompts often are).
fn definition() -> (PipelineDef, BTreeMap<String, String>) {
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
    let rules = "- Quote table, column and class names exactly as they appear in the context.\n\
                 - When the context does not answer the question, say which file would.\n";
    let def = PipelineDef::new("CodeQa")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(128_000))
                .max_tokens(Some(1_024))
                .encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(80_000))
                .max_history_tokens(Some(12_000))
                .budget_safety_margin_tokens(Some(256)),
        )
        .prompts(vec![
            PromptSpec::default().key("answer".into()),
            PromptSpec::new("summarizer", Some(rules.repeat(40))),
            PromptSpec::new("router", Some("Answer `search` or `answer`.".into())),
        ])
        .steps(vec![
            StepDef::new("route", call("router", 10, false)),
            StepDef::new("summarize", call("summarizer", 4_000, false)),
            StepDef::new("answer", call("answer", 2_000, true)),
        ]);
    let prompts = BTreeMap::from([("answer".to_owned(), rules.repeat(120))]);
    (def, prompts)
}

fn bench(c: &mut Criterion) {
    let (def, prompts) = definition();
    let ModelSource::Inline(spec) = &def.model else { return };
    let Ok(model) = ModelConfig::from_spec(spec, &FieldPath::root().key("model")) else { return };
    let Ok(settings) =
        Settings::from_spec(&def.settings, pipeline_uses_history(&def), &FieldPath::root().key("settings"))
    else {
        return;
    };
    let Ok(checks) = call_model_checks(&def, &prompts) else { return };
    let warm = model.counter();

    let mut group = c.benchmark_group("contract_per_request");
    group.bench_function("recompute_cold_counts", |b| {
        b.iter_batched(
            || {
                // Nothing known: an empty count cache, and the encoding's process-wide piece
                // cache emptied too, so every prompt is tokenized and every piece merged again.
                let backend = BpeBackend::new(Encoding::Cl100kBase);
                backend.piece_cache().clear();
                TokenCounter::with_backend(Arc::new(backend), ChatFormat::openai(), 64)
            },
            |cold| black_box(check_contract(&model, &settings, &checks, &cold).is_ok()),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("recompute_warm_counts", |b| {
        b.iter(|| black_box(check_contract(&model, &settings, &checks, &warm).is_ok()))
    });
    let cache = ContractCache::default();
    group.bench_function("fingerprint_and_cache_hit", |b| {
        b.iter(|| {
            let Ok(fp) = Fingerprint::of(&def, &prompts, &model, &settings, &warm) else { return false };
            let outcome = cache.get_or_check(fp, || check_contract(&model, &settings, &checks, &warm));
            black_box(outcome.is_ok())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
