//! Expansion time of a 40-step pipeline, with and without the compile-time token check.
//!
//! A measurement, not a test: it asserts nothing about time and is ignored by default. Run it
//! with `cargo test -p ctx-macros --lib [--release] -- --ignored --nocapture measure`.

use std::time::{Duration, Instant};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Ten blocks of search → fetch → manage → call_model, chained, with one prompt per block: 40
/// steps. With `literal_prompts` the prompts are string literals, so the contract of each
/// `call_model` step is checked with the real tokenizer while expanding; otherwise they are
/// `at_load` and the check waits for load time.
fn forty_steps(literal_prompts: bool) -> TokenStream {
    let mut prompts = Vec::new();
    let mut steps = Vec::new();
    for b in 0..10usize {
        let (search, fetch, manage, call) = (
            format_ident!("search_{}", b),
            format_ident!("fetch_{}", b),
            format_ident!("manage_{}", b),
            format_ident!("answer_{}", b),
        );
        let next = if b == 9 { format_ident!("end") } else { format_ident!("search_{}", b + 1) };
        let prompt = format_ident!("prompt_{}", b);
        let text = format!(
            "You are step {b} of a code-review assistant. Read the context, quote identifiers and SQL \
             verbatim, cite the file of every claim, and say plainly when the context does not hold \
             the answer. Keep the answer under two hundred words. "
        )
        .repeat(4);
        prompts.push(if literal_prompts { quote!(#prompt: #text) } else { quote!(#prompt: at_load) });
        steps.push(quote! {
            #search: search_nodes { top_k: 20, next: #fetch },
            #fetch: fetch_node_texts { evidence_tokens: 3_000, next: #manage },
            #manage: manage_context_budget {
                compact_code: [ { language: sql, policy: threshold, threshold: 0.4 } ],
                on_ok: #call,
                on_over: #call,
            },
            #call: call_model {
                prompt_key: #prompt,
                max_output_tokens: 1_000,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question => "### User:\n{}\n\n" ],
                next: #next,
            },
        });
    }
    quote! {
        pub pipeline Forty {
            model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
            settings { max_context_tokens: 9_000, budget_safety_margin_tokens: 128 }
            prompts { #(#prompts,)* }
            steps { #(#steps)* }
        }
    }
}

fn time(tokens: &TokenStream) -> Duration {
    let start = Instant::now();
    let out = crate::expand::pipeline(tokens.clone(), None);
    let elapsed = start.elapsed();
    assert!(!out.to_string().contains("compile_error"), "the measured pipeline must be valid:\n{out}");
    elapsed
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[test]
#[ignore = "a measurement; run with --ignored --nocapture"]
fn measure_expansion_of_forty_steps() {
    let without = forty_steps(false);
    let with = forty_steps(true);
    // First expansion in this process: with the check, it builds the tokenizer (once per process).
    let cold_without = time(&without);
    let cold_with = time(&with);
    // What the contract check adds once it counts: building the encoder (once per compiler
    // process) and counting the prompts. Measured apart so it shows before the check lands.
    let start = Instant::now();
    let counter = ctx_spec::tokens::TokenCounter::for_encoding(ctx_spec::tokens::Encoding::Cl100kBase);
    let built = start.elapsed();
    let prompt = "You are a code-review assistant. Quote identifiers and SQL verbatim. ".repeat(16);
    let start = Instant::now();
    let tokens: usize = (0..10).map(|b| counter.count(&format!("{b} {prompt}")).unwrap_or(0)).sum();
    let counted = start.elapsed();
    let warm_without = median((0..21).map(|_| time(&without)).collect());
    let warm_with = median((0..21).map(|_| time(&with)).collect());
    println!(
        "40-step pipeline, expansion time (profile: {}):",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
    println!("  without token checks: first {cold_without:?}, median of 21 {warm_without:?}");
    println!("  with token checks:    first {cold_with:?}, median of 21 {warm_with:?}");
    println!("  cl100k encoder built in {built:?}; 10 prompts ({tokens} tokens) counted in {counted:?}");
}
