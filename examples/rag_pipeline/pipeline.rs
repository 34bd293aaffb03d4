//! The pipeline of the demo, and its one user-written step.
//!
//! The question's hits (and the files they name) are read in batches of at most `fetch`'s
//! evidence budget. Each batch joins the context through `manage_context_budget`, which compacts
//! C# always and SQL once the context passes half of its budget; when a batch no longer fits, the
//! context read so far is summarised (under `budget_loop_guard`) and the batch is tried again.
//! `next_batch` drops the hits just read and says whether any are left; `evidence_guard` bounds
//! how many batches a question reads. Both loops pass a `loop_guard`, which is what lets
//! `pipeline!` prove, when it compiles this file, that every run ends.

use ctx::PipelineState;
use ctx::budget::NODE_HEADER;
use ctx::pipeline::BoxError;

ctx::pipeline! {
    /// Answers questions about the invoicing code base in `examples/codebase/`.
    pub pipeline CodebaseQa {
        // Two 8k models counted with cl100k_base (a local Llama 3 8B under Ollama or vLLM fits, as
        // does any OpenAI model): a small one summarises, a strong one answers. Their prices, in US
        // dollars per million tokens, are OpenAI's list prices for gpt-4.1-mini and gpt-4.1 on
        // 2025-10-15, as in ctx's price table (`ctx::config::PRICE_TABLE`).
        models {
            small { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base,
                    price: { input: 0.40, cached_input: 0.10, output: 1.60 } },
            strong { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base,
                     price: { input: 2.00, cached_input: 0.50, output: 8.00 } },
        }
        settings {
            max_context_tokens: 4_000,
            max_history_tokens: 1_000,
            budget_safety_margin_tokens: 128,
            // Summarise passes per question, and batches read after the first.
            max_turn_loops: 2,
            max_evidence_batches: 2,
        }
        prompts {
            answer: include_str!("../prompts/answer.txt"),
            summarizer: include_str!("../prompts/summarizer.txt"),
        }
        steps {
            search: search_nodes { top_k: 8, next: expand },
            expand: expand_dependency_tree { max_depth: 1, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 1_800, next: manage_budget },
            manage_budget: manage_context_budget {
                compact_code: [
                    { language: sql, policy: threshold, threshold: 0.5 },
                    { language: dotnet, policy: always },
                ],
                divide_new_content: "<<<New content",
                on_ok: next_batch,
                on_over: budget_loop_guard,
            },
            next_batch: custom { outcomes { more => evidence_guard, done => answer } },
            evidence_guard: loop_guard {
                max_turn_loops_from_settings: max_evidence_batches,
                on_allow: fetch,
                on_deny: answer,
            },
            budget_loop_guard: loop_guard {
                max_turn_loops_from_settings: max_turn_loops,
                on_allow: summarize,
                on_deny: answer,
            },
            summarize: call_model {
                prompt_key: summarizer,
                model: small,
                max_output_tokens: 1_200,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: set_context_from_summary,
            },
            set_context_from_summary: set_variables {
                rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                next: manage_budget,
            },
            answer: call_model {
                prompt_key: answer,
                model: strong,
                use_history: true,
                max_output_tokens: 700,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

/// `next_batch`: runs right after a batch joined the context, so every node of that batch is in
/// `context_blocks` under its `--- NODE ---` header. It removes those nodes from
/// `search_results`, so that `fetch` reads the next ones, and answers `More` while hits remain
/// and the batch added something (`Done` otherwise, so that a hit too large for the evidence
/// budget cannot keep the loop going). The pipeline's custom steps are the methods of the
/// generated `CodebaseQaCustom` trait, and each returns its own generated outcome enum.
#[derive(Debug, Default)]
pub struct NextBatch;

impl CodebaseQaCustom for NextBatch {
    async fn next_batch(&self, state: &mut PipelineState) -> Result<CodebaseQaNextBatchOutcome, BoxError> {
        let read = node_ids(&state.context_blocks);
        let before = state.search_results.len();
        state.search_results.retain(|hit| !read.iter().any(|id| *id == hit.id));
        let removed = before - state.search_results.len();
        Ok(if removed > 0 && !state.search_results.is_empty() {
            CodebaseQaNextBatchOutcome::More
        } else {
            CodebaseQaNextBatchOutcome::Done
        })
    }
}

/// The ids of the `--- NODE ---` blocks in `blocks`, in order (the `id:` line that follows each
/// header).
pub fn node_ids(blocks: &[String]) -> Vec<&str> {
    let mut ids = Vec::new();
    for block in blocks {
        let mut lines = block.lines();
        while let Some(line) = lines.next() {
            if line == NODE_HEADER
                && let Some(id) = lines.next().and_then(|l| l.strip_prefix("id: "))
            {
                ids.push(id);
            }
        }
    }
    ids
}
