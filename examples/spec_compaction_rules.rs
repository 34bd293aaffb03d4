//! The spec's compaction rules (manage_context_budget.md, "Example: demand + threshold +
//! always"): SQL is compacted when a step asks for it through the inbox (`demand`) or when it
//! would take more than 40 % of the budget (`threshold`), .NET code always. The first rule that
//! matches a node's language wins.
//!
//! Run with `cargo run --example spec_compaction_rules`; `cargo test` runs it too.

#[path = "support/mod.rs"]
mod support;

use ctx::{InboxMessage, PipelineState};

ctx::pipeline! {
    /// Answers from retrieved code, compacted by language.
    pub pipeline CompactionRules {
        model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 6_000 }
        prompts {
            answer: "Answer the question from the context; quote identifiers and SQL verbatim.",
            summarizer: "Summarise the context; keep identifiers and SQL verbatim.",
        }
        steps {
            search: search_nodes { top_k: 4, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage_budget },
            manage_budget: manage_context_budget {
                compact_code: [
                    { language: sql, policy: demand, inbox_key: "compact_sql" },
                    { language: sql, policy: threshold, threshold: 0.4 },
                    { language: dotnet, policy: always },
                ],
                on_ok: call_model_answer,
                on_over: call_summarize_context,
            },
            call_summarize_context: call_model {
                prompt_key: summarizer,
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
    let env = CompactionRulesEnv { search: &corpus, store: &corpus, model: &model };
    let pipeline = CompactionRules::new()?;

    let mut question = PipelineState::new("Which service recomputes the invoice total, and how is it rounded?");
    // An earlier step (or the caller) asks `manage_budget` to compact SQL this turn.
    question.enqueue(InboxMessage::new(CompactionRulesStep::ManageBudget.id(), "compact_sql"));
    let (state, reports) = pipeline.run(question, &env).await?;

    let path: Vec<&str> = reports.iter().map(|r| r.step_id.as_str()).collect();
    println!("steps taken: {}", path.join(" -> "));
    for block in &state.context_blocks {
        println!("{block}\n");
    }
    assert_eq!(path, ["search", "fetch", "manage_budget", "call_model_answer"]);
    // Every appended node says whether it was compacted; here SQL (on demand) and .NET (always) were.
    let context = state.context_blocks.join("\n");
    assert!(context.contains("language: sql") && context.contains("language: dotnet"), "{context}");
    assert!(!context.contains("compact: false"), "every SQL/.NET node is compacted:\n{context}");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs() {
        super::main().expect("the example runs");
    }
}
