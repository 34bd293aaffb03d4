//! Expansion snapshots: the generated code of representative pipelines, pretty-printed and
//! compared with `snapshots/*.rs` (`UPDATE_EXPECT=1 cargo test -p ctx-macros` rewrites them;
//! read the diff). The files are never compiled as modules; the examples and ui-tests compile
//! the same expansions for real.

#[cfg(feature = "yaml")]
mod file_form;
mod measure;
#[cfg(all(feature = "hf", feature = "yaml"))]
mod model_files;

use std::path::Path;

use expect_test::{ExpectFile, expect_file};
use proc_macro2::TokenStream;
use quote::quote;

/// The expansion of `tokens`, pretty-printed; `include_str!` paths resolve against this folder.
pub(crate) fn expand(tokens: TokenStream) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tests");
    let out = crate::expand::pipeline(tokens, Some(&dir));
    match syn2::parse2::<syn2::File>(out.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(e) => panic!("the expansion is not valid Rust ({e}):\n{out}"),
    }
}

fn check(tokens: TokenStream, expected: ExpectFile, is_error_case: bool) {
    let code = expand(tokens);
    // Only the `errors` snapshot may hold errors: a valid pipeline that stops validating (a new
    // rule) must fail here, not be recorded as the new expected output.
    assert_eq!(code.contains("compile_error!"), is_error_case, "{code}");
    expected.assert_eq(&code);
}

#[test]
fn minimal_pipeline() {
    check(
        quote! {
            /// Looks nodes up and answers.
            pub pipeline Minimal {
                model { model: "gpt-4o" }
                settings { max_context_tokens: 4_000 }
                prompts { answer: "Answer from the context only." }
                steps {
                    search: search_nodes { top_k: 5, next: fetch },
                    fetch: fetch_node_texts { evidence_tokens: 2_000, next: answer },
                    answer: call_model { prompt_key: answer, max_output_tokens: 500, user_parts: [ context_blocks => "Context:\n{}" ], next: end },
                }
            }
        },
        expect_file!["snapshots/minimal.rs"],
        false,
    );
}

#[test]
fn compaction_loop_with_guard_and_prompt_file() {
    check(
        quote! {
            /// The on_over compaction loop of the spec.
            pub(crate) pipeline CompactionLoop {
                model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
                settings { max_context_tokens: 9_000, max_history_tokens: 2_000, max_turn_loops: 3 }
                prompts {
                    answer: include_str!("prompts/answer.txt"),
                    summarizer: "Summarise the context; keep identifiers and SQL verbatim.",
                }
                steps {
                    search: search_nodes { top_k: 20, next: fetch },
                    fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage_budget },
                    manage_budget: manage_context_budget {
                        compact_code: [
                            { language: sql, policy: demand, inbox_key: "compact_sql" },
                            { language: dotnet, policy: always },
                        ],
                        divide_new_content: "<<<New content",
                        on_ok: answer,
                        on_over: budget_loop_guard,
                    },
                    budget_loop_guard: loop_guard { max_turn_loops_from_settings: max_turn_loops, on_allow: summarize, on_deny: answer },
                    summarize: call_model {
                        prompt_key: summarizer, max_output_tokens: 2_000,
                        user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                        next: set_context_from_summary,
                    },
                    set_context_from_summary: set_variables {
                        rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                        next: manage_budget,
                    },
                    answer: call_model { prompt_key: answer, use_history: true, next: end },
                }
            }
        },
        expect_file!["snapshots/compaction_loop.rs"],
        false,
    );
}

#[test]
fn custom_step_and_config_model() {
    check(
        quote! {
            pub pipeline Routed {
                model: config("config.json")
                settings { max_context_tokens: 6_000 }
                prompts { answer: at_load }
                steps {
                    classify: custom { outcomes { code => search, chat => answer } },
                    search: search_nodes { top_k: 10, next: fetch },
                    fetch: fetch_node_texts { evidence_tokens: 2_000, next: answer },
                    answer: call_model { prompt_key: answer, next: end },
                }
            }
        },
        expect_file!["snapshots/custom_config.rs"],
        false,
    );
}

#[test]
fn errors_still_emit_the_struct_and_the_step_enum() {
    check(
        quote! {
            pub pipeline Broken {
                model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
                steps {
                    search: search_nodes { top_k: 0, next: fetc },
                    fetch: fetch_node_texts { evidence_tokens: 100, nxt: end },
                }
            }
        },
        expect_file!["snapshots/errors.rs"],
        true,
    );
}
