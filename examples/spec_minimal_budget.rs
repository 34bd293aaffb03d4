//! The spec's minimal `manage_context_budget` step (manage_context_budget.md, "Example: minimal
//! step (no compaction)") in a whole pipeline: retrieved texts join the context when the global
//! budget allows (`on_ok`), else the existing context is summarised first (`on_over`).
//!
//! Run with `cargo run --example spec_minimal_budget`; `cargo test` runs it too.

#[path = "support/mod.rs"]
mod support;

use ctx::PipelineState;

ctx::pipeline! {
    /// Answers a question about the code base from retrieved files.
    pub pipeline MinimalBudget {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 6_000 }
        prompts {
            answer: "Answer the question from the context; quote identifiers and SQL verbatim.",
            sumarizer: "Summarise the context; keep identifiers and SQL verbatim.",
        }
        steps {
            search: search_nodes { top_k: 3, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage_budget },
            manage_budget: manage_context_budget { on_ok: call_model_answer, on_over: call_summarize_context },
            call_summarize_context: call_model {
                prompt_key: sumarizer,
                max_output_tokens: 500,
                user_parts: [ context_blocks => "### Context:\n{}\n\n" ],
                next: set_context_from_summary,
            },
            set_context_from_summary: set_variables {
                rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                next: call_model_answer,
            },
            call_model_answer: call_model {
                prompt_key: answer,
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
    let env = MinimalBudgetEnv { search: &corpus, store: &corpus, model: &model };
    let pipeline = MinimalBudget::new()?;

    let question = PipelineState::new("How does usp_ComputeInvoiceTotal round the invoice total?");
    let (state, reports) = pipeline.run(question, &env).await?;

    let path: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    println!("steps taken: {}", path.join(" -> "));
    println!("answer: {}", state.last_model_response.as_deref().unwrap_or(""));
    // The retrieved files fit in the 6 000-token budget, so the batch was appended (`on_ok`).
    assert_eq!(path, ["search", "fetch", "manage_budget", "call_model_answer"]);
    assert!(state.context_blocks.iter().any(|b| b.contains("--- NODE ---")));
    assert!(state.node_texts.is_empty(), "on_ok consumes the retrieval buffer");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().expect("the example runs");
    }
}
