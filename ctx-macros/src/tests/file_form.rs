//! The file form, `pub pipeline Qa { file: "…" }` and `pipeline!(file = "…")`: every problem of
//! the YAML is reported at once, each naming its file, line and column with the source line; the
//! expansion names every file it read so that cargo rebuilds when one changes.

use std::path::Path;

use expect_test::expect;
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

/// The expansion of `tokens` and the messages of its `compile_error!`s, with this crate's
/// directory written `$CRATE` (so the expected text holds on every machine).
fn expand(tokens: TokenStream) -> (String, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = crate::expand::pipeline(tokens, Some(&dir.join("src/tests")));
    let mut errors = Vec::new();
    collect_errors(out.clone(), &mut errors);
    let crate_dir = dir.to_string_lossy().into_owned();
    (
        out.to_string().replace(&crate_dir, "$CRATE"),
        errors.into_iter().map(|e| e.replace(&crate_dir, "$CRATE")).collect(),
    )
}

pub(super) fn collect_errors(tokens: TokenStream, out: &mut Vec<String>) {
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Ident(i) if i == "compile_error" => {
                iter.next(); // `!`
                if let Some(TokenTree::Group(g)) = iter.next() {
                    let lit: syn::LitStr = syn::parse2(g.stream()).expect("a message");
                    out.push(lit.value());
                }
            }
            TokenTree::Group(g) => collect_errors(g.stream(), out),
            _ => {}
        }
    }
}

#[test]
fn every_problem_of_the_file_is_reported_where_it_was_written() {
    let (code, errors) = expand(quote! {
        pub pipeline Broken { file: "src/tests/pipelines/broken.yaml" }
    });
    expect![[r#"
        src/tests/pipelines/broken.yaml:12:12: `top_k` of step `search` is 0; it must be at least 1 [INVALID_TOP_K]
           |
        12 |     top_k: 0
           |            ^
        help: set `top_k` to the number of hits to keep, e.g. `top_k: 20`
        ---
        src/tests/pipelines/broken.yaml:16:17: step `answer` uses prompt `anwser`, which is not declared in `prompts` [UNKNOWN_PROMPT]
           |
        16 |     prompt_key: anwser
           |                 ^
        help: did you mean `answer`? (known prompts: `answer`)
        ---
        src/tests/pipelines/broken.yaml:18:11: `next` of step `answer` goes to `finish`, which is not a step of this pipeline [UNKNOWN_STEP_TARGET]
           |
        18 |     next: finish
           |           ^
        help: known targets: `search`, `answer`, `end`"#]].assert_eq(&errors.join("\n---\n"));
    // The API is still emitted (with stub bodies), and the files read are tracked.
    assert!(code.contains("pub enum BrokenStep"), "{code}");
    assert!(code.contains("include_bytes ! (\"$CRATE/src/tests/pipelines/broken.yaml\")"), "{code}");
}

#[test]
fn yaml_level_problems_show_the_source_line() {
    let (code, errors) = expand(quote! {
        pub pipeline Typo { file: "src/tests/pipelines/typo.yaml" }
    });
    expect![[r#"
        src/tests/pipelines/typo.yaml:10:5: unknown key `nxt` in step `answer`; expected one of `id`, `action`, `prompt_key`, `model`, `max_output_tokens`, `max_tokens`, `user_parts`, `use_history`, `context`, `temperature`, `top_p`, `presence_penalty`, `frequency_penalty`, `stop`, `seed`, `response_format`, `next`, did you mean `next`? [YAML_UNKNOWN_KEY]
           |
        10 |     nxt: end
           |     ^
        help: rename it to `next`"#]].assert_eq(&errors.join("\n---\n"));
    assert!(code.contains("pub enum TypoStep"), "{code}");
}

#[test]
fn rule_violations_name_the_file_that_wrote_the_value() {
    let (code, errors) = expand(quote! {
        pub pipeline Contract { file: "src/tests/pipelines/contract.yaml" }
    });
    expect![[r#"
        src/tests/pipelines/base.yaml:6:5: call_model step `answer` can need 8307 tokens but the model's context window is 8192 (over by 115): fixed prompt 23 (system prompt `answer`, user_parts templates, chat overhead) + history 0 (no use_history) + max_context_tokens 7900 + question (`user_question_en`) 0 (`max_question_tokens` not set: it gets the room the window leaves) + max_output_tokens 256 (from the step's `max_output_tokens`) + budget_safety_margin_tokens 128 = 8307 [BUDGET_CONTRACT_VIOLATED]
          |
        6 |   - id: answer
          |     ^
        help: lower `settings.max_context_tokens` from 7900 to 7785; or use a model whose context window is at least 8307; or, in dev/test only, opt into `limits_policy: auto_clamp`"#]].assert_eq(&errors.join("\n---\n"));
    for file in ["contract.yaml", "base.yaml", "answer.txt"] {
        assert!(code.contains(&format!("include_bytes ! (\"$CRATE/src/tests/pipelines/{file}\")")), "{file}: {code}");
    }
}

#[test]
fn a_missing_file_and_sections_beside_file_are_errors() {
    let (_, errors) = expand(quote! {
        pub pipeline Qa { file: "src/tests/pipelines/nope.yaml", steps {} }
    });
    expect![[r#"
        `steps` beside `file`: a pipeline read from a file declares everything in the file
        help: move `steps` into the YAML file, or remove `file` and declare the pipeline here
        ---
        src/tests/pipelines/nope.yaml: cannot read pipeline file `$CRATE/src/tests/pipelines/nope.yaml`: No such file or directory (os error 2) [PIPELINE_FILE_UNREADABLE]"#]].assert_eq(&errors.join("\n---\n"));
    let (_, errors) = expand(quote! { file = "src/tests/pipelines/nope.yaml" });
    expect!["src/tests/pipelines/nope.yaml: cannot read pipeline file `$CRATE/src/tests/pipelines/nope.yaml`: No such file or directory (os error 2) [PIPELINE_FILE_UNREADABLE]"].assert_eq(&errors.join("\n---\n"));
}

#[test]
fn the_short_form_is_named_after_the_file() {
    let (code, errors) = expand(quote! { file = "../examples/pipelines/compaction_loop.yaml" });
    assert_eq!(errors, Vec::<String>::new());
    assert!(code.contains("pub type CompactionLoop"), "{code}");
    // The model's `config.json` is named relative to the crate, never by the build machine's path.
    assert!(
        code.contains("ConfigFile (:: std :: string :: String :: from (\"../examples/pipelines/config.json\"))"),
        "{code}"
    );
}

#[test]
fn names_that_cannot_be_rust_identifiers_are_errors_and_keywords_are_raw() {
    let (code, errors) = expand(quote! {
        pub pipeline Names { file: "src/tests/pipelines/names.yaml" }
    });
    expect![[r#"
        step id `route-it` cannot name a variant of `NamesStep`: `Route-it` is not a Rust identifier (letters, digits and `_`, not starting with a digit)
        help: rename the step: letters, digits and `_`, starting with a letter, e.g. `step_1`
        ---
        outcome `more-docs` of step `check` cannot name a variant of its outcome enum: `More-docs` is not a Rust identifier (letters, digits and `_`, not starting with a digit)
        help: rename the outcome: letters, digits and `_`, starting with a letter, e.g. `done`
        ---
        tool `search-docs` of step `answer` cannot name a method of `NamesTools`: `search-docs` is not a Rust identifier (letters, digits and `_`, not starting with a digit)
        help: rename the tool: letters, digits and `_`, not starting with a digit"#]].assert_eq(&errors.join("\n---\n"));
    // A keyword is a raw identifier: the tool `match` is `fn r#match`, the outcome `match` the
    // variant `Match`.
    assert!(code.contains("fn r#match"), "{code}");
    assert!(code.contains("NamesCheckOutcome"), "{code}");
}
