//! The spec's `on_over` compaction loop (manage_context_budget.md, "Example: on_over compaction
//! loop"): when the existing context leaves no room for the retrieved texts, a summarising model
//! call replaces the context with its summary and the budget step is retried; a `loop_guard`
//! bounds the retries, which is what lets `pipeline!` prove at compile time that every run ends.
//!
//! Run with `cargo run --example spec_compaction_loop`; `cargo test` runs it too.

#[path = "support/mod.rs"]
mod support;

use ctx::PipelineState;

ctx::pipeline! {
    /// Answers follow-up questions, compacting the accumulated context when it is full.
    pub pipeline CompactionLoop {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 2_000, max_history_tokens: 2_000, max_turn_loops: 2 }
        prompts {
            answer: "Answer the question from the context; quote identifiers and SQL verbatim.",
            sumarizer: "Summarise the context in a few lines; keep identifiers and SQL verbatim.",
        }
        steps {
            search: search_nodes { top_k: 3, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 1_200, next: manage_budget },
            manage_budget: manage_context_budget {
                divide_new_content: "<<<New content",
                on_ok: call_model_answer,
                on_over: budget_loop_guard,
            },
            budget_loop_guard: loop_guard {
                max_turn_loops_from_settings: max_turn_loops,
                on_allow: call_summarize_context,
                on_deny: call_model_answer,
            },
            call_summarize_context: call_model {
                prompt_key: sumarizer,
                max_output_tokens: 2_000,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: set_context_from_summary,
            },
            set_context_from_summary: set_variables {
                rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                next: manage_budget,
            },
            call_model_answer: call_model {
                prompt_key: answer,
                use_history: true,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let corpus = support::Corpus::new();
    let model = support::OfflineModel::default();
    let env = CompactionLoopEnv { search: &corpus, store: &corpus, model: &model };
    let pipeline = CompactionLoop::new()?;

    // A follow-up turn: the context still holds what earlier turns gathered, filled to within 100
    // tokens of the global budget (counted with the pipeline's own tokenizer), so the new
    // retrieval batch cannot join it until it is compacted.
    let mut question = PipelineState::new("Which service recomputes the invoice total?");
    let budget = pipeline.pipeline().max_context_tokens();
    let sentence = "Earlier turn: the invoice schema keeps Quantity, UnitPrice and Discount per line; \
                    totals are recomputed by a stored procedure after every change. ";
    let mut earlier = String::new();
    while pipeline.pipeline().counter().count(&format!("{earlier}{sentence}"))? + 100 <= budget {
        earlier.push_str(sentence);
    }
    question.context_blocks = vec![earlier];
    let (state, reports) = pipeline.run(question, &env).await?;

    let path: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    println!("steps taken: {}", path.join(" -> "));
    println!("\n{}", CompactionLoop::MERMAID);
    assert_eq!(
        path,
        [
            "search",
            "fetch",
            "manage_budget",
            "budget_loop_guard",
            "call_summarize_context",
            "set_context_from_summary",
            "manage_budget",
            "call_model_answer",
        ]
    );
    assert!(state.context_blocks.iter().any(|b| b.starts_with("<<<New content")));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().expect("the example runs");
    }
}
