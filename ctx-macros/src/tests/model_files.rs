//! `model { gguf: "…" }`: the contract counted at compile time with the model's own tokenizer and
//! chat template, read from its files — the same prompt and window that fit under one model's
//! tokenizer do not fit under another's.
//!
//! The model file is SmolLM2-135M-Instruct's GGUF, provisioned by `scripts/llama-server.sh`
//! (`CTX_LLAMA_GGUF`); without it the test is skipped with a message, except under CI.

use std::path::Path;

use proc_macro2::TokenStream;
use quote::quote;

/// The messages of the `compile_error!`s of the expansion of `tokens`.
fn errors(tokens: TokenStream) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = crate::expand::pipeline(tokens, Some(&dir.join("src/tests")));
    let mut found = Vec::new();
    super::file_form::collect_errors(out, &mut found);
    found
}

/// A Russian system prompt: a text whose token count differs most between an English-centric
/// vocabulary (SmolLM2's 49k) and o200k.
fn prompt() -> String {
    "Отвечай только по контексту и называй файлы, которые ты использовал для ответа. ".repeat(40)
}

#[test]
fn the_same_prompt_fits_one_models_tokenizer_and_not_anothers() {
    let Some(gguf) = std::env::var_os("CTX_LLAMA_GGUF") else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CTX_LLAMA_GGUF is not set under CI");
        eprintln!("skipped: CTX_LLAMA_GGUF is not set (run `eval \"$(scripts/llama-server.sh env)\"`)");
        return;
    };
    let gguf = gguf.to_string_lossy().into_owned();
    let prompt = prompt();
    // The window is SmolLM2's, read from its GGUF (8192).
    let smollm2 = errors(quote! {
        pub pipeline Local {
            model { gguf: #gguf, max_tokens: 256 }
            settings { max_context_tokens: 6_500 }
            prompts { answer: #prompt }
            steps { answer: call_model { prompt_key: answer, next: end } }
        }
    });
    let o200k = errors(quote! {
        pub pipeline Hosted {
            model { context_window: 8_192, max_tokens: 256, encoding: o200k_base }
            settings { max_context_tokens: 6_500 }
            prompts { answer: #prompt }
            steps { answer: call_model { prompt_key: answer, next: end } }
        }
    });
    assert_eq!(o200k, Vec::<String>::new());
    assert_eq!(smollm2.len(), 1, "{smollm2:?}");
    let message = &smollm2[0];
    assert!(message.contains("context window is 8192"), "{message}");
    // The fixed prompt is the model's own count of the rendered template, far above o200k's.
    let fixed: usize = message
        .split("fixed prompt ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fixed prompt count in {message}"));
    let o200k_count =
        ctx_spec::tokens::TokenCounter::for_encoding(ctx_spec::tokens::Encoding::O200kBase).count(&prompt).unwrap();
    assert!(fixed > 1_308 && fixed > 2 * o200k_count, "SmolLM2 {fixed} vs o200k {o200k_count}");
    eprintln!("fixed prompt: SmolLM2 {fixed} tokens, o200k text alone {o200k_count}");
}

#[test]
fn unreadable_model_files_are_reported_at_the_key() {
    let found = errors(quote! {
        pub pipeline Local {
            model { tokenizer: "src/tests/no-such/tokenizer.json", context_window: 8_192 }
            settings { max_context_tokens: 4_000 }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, max_output_tokens: 256, next: end } }
        }
    });
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("src/tests/no-such/tokenizer.json"), "{}", found[0]);
    assert!(found[0].contains("help: name the model's tokenizer.json"), "{}", found[0]);
    let both = errors(quote! {
        pub pipeline Local {
            model { tokenizer: "a/tokenizer.json", gguf: "b.gguf", context_window: 8_192 }
            settings { max_context_tokens: 4_000 }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, max_output_tokens: 256, next: end } }
        }
    });
    // One mistake, one error: no "no `encoding`" echo of the tokenizer that could not be read.
    assert_eq!(both.len(), 1, "{both:?}");
    assert!(both[0].starts_with("`model` writes both `tokenizer` and `gguf`"), "{both:?}");
}
