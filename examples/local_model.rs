//! The spec's `CodeQa` pipeline against a real model on this machine: SmolLM2-135M-Instruct,
//! served by llama-cpp-python with a 2,048-token context, answering a question about the example
//! code base (`examples/codebase`). ctx counts every prompt with the server's own tokenizer and
//! the model's chat template, so each request's predicted prompt tokens are the server's
//! `usage.prompt_tokens`, and prompt + output always fits the server's context.
//!
//! ```sh
//! scripts/llama-server.sh start                 # provision once (~10 min build), then start
//! eval "$(scripts/llama-server.sh env)"         # CTX_LLAMA_BASE_URL, CTX_LLAMA_MODEL, CTX_LLAMA_N_CTX
//! cargo run --features llama --example local_model -- "How is the tax total of an invoice computed?"
//! scripts/llama-server.sh stop
//! ```
//!
//! Without `CTX_LLAMA_BASE_URL` the example says how to start the server and exits.

use std::path::Path;

use ctx::PipelineState;
use ctx::llm::llama_cpp::{ENV_BASE_URL, LocalModel};
use ctx::pipeline::{BoxError, LoadOptions, NodeSearch, NodeStore, StepDetail, StepEnv};
use ctx::retrieve::{Bm25Index, IndexOptions};
use ctx::state::{NodeText, SearchHit, render_context_blocks};

ctx::pipeline! {
    /// Answers questions about a SQL/.NET code base with a 2,048-token local model.
    pub pipeline CodeQaLocal {
        // Checked at compile time with cl100k; at load time `LocalModel::load` replaces the window
        // with the server's and re-checks every budget with the server's tokenizer.
        model { context_window: 2_048, max_tokens: 256, encoding: cl100k_base }
        settings {
            max_context_tokens: 900,
            max_history_tokens: 200,
            budget_safety_margin_tokens: 64,
            max_turn_loops: 2,
        }
        prompts {
            answer: "Answer the question from the context. Be brief.",
            summarizer: "Summarise the context in a few sentences; keep identifiers and SQL names verbatim.",
        }
        steps {
            search: search_nodes { top_k: 6, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 600, next: manage_budget },
            manage_budget: manage_context_budget {
                compact_code: [
                    { language: sql, policy: threshold, threshold: 0.4 },
                    { language: dotnet, policy: always },
                ],
                divide_new_content: "<<<New content",
                on_ok: answer,
                on_over: budget_loop_guard,
            },
            budget_loop_guard: loop_guard {
                max_turn_loops_from_settings: max_turn_loops, on_allow: summarize, on_deny: answer,
            },
            summarize: call_model {
                prompt_key: summarizer, max_output_tokens: 200,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: set_context_from_summary,
            },
            set_context_from_summary: set_variables {
                rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                next: manage_budget,
            },
            answer: call_model {
                prompt_key: answer, max_output_tokens: 256, use_history: true,
                user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                next: end,
            },
        }
    }
}

/// The example code base as the pipeline's search (BM25) and store.
struct CodeBase(Bm25Index);

impl NodeSearch for CodeBase {
    async fn search(&self, query: &str, top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
        Ok(self.0.search(query, top_k))
    }
}

impl NodeStore for CodeBase {
    async fn texts(&self, ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
        Ok(ids.iter().filter_map(|id| self.0.node_text(id).ok()).collect())
    }

    async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
        Ok(Vec::new())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(local) = LocalModel::from_env()? else {
        eprintln!(
            "{ENV_BASE_URL} is not set. Start the local model first:\n  scripts/llama-server.sh start\n  \
             eval \"$(scripts/llama-server.sh env)\""
        );
        if std::env::var_os("CI").is_some() {
            return Err(format!("{ENV_BASE_URL} is not set under CI").into());
        }
        return Ok(());
    };
    let question = std::env::args().nth(1).unwrap_or_else(|| "How is the tax total of an invoice computed?".into());
    let pipeline = local.load(CodeQaLocal::definition(), LoadOptions::new())?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/codebase");
    let code = CodeBase(Bm25Index::from_dir(root, &IndexOptions::default())?);
    let env = StepEnv::builder().search(&code).store(&code).model(local.client()).build();

    // A follow-up turn: earlier findings (the code base's overview) already fill most of the
    // 900-token context budget, so the retrieved files only fit after the context is summarised.
    let mut state = PipelineState::new(question);
    let overview = code.0.text("docs/README.md").unwrap_or_default();
    for paragraph in overview.split("\n\n").filter(|p| !p.trim().is_empty()) {
        state.context_blocks.push(paragraph.trim().to_owned());
        if pipeline.counter().count(&render_context_blocks(&state.context_blocks))? > 800 {
            state.context_blocks.pop();
            break;
        }
    }

    println!(
        "model `{}` at {}, n_ctx {} (from the server)",
        local.client().config().model,
        local.server().openai_base_url(),
        local.window()
    );
    let (state, reports) = pipeline.run(state, &env).await?;
    println!("steps: {}", reports.iter().map(|r| r.step_id.as_str()).collect::<Vec<_>>().join(" -> "));
    println!(
        "\n| step | ctx predicted prompt | server usage.prompt_tokens | max_tokens | n_ctx |\n|---|---|---|---|---|"
    );
    for report in &reports {
        if let StepDetail::CallModel(call) = &report.detail {
            let reported = call.request.usage.map_or_else(|| "-".to_owned(), |u| u.prompt_tokens.to_string());
            println!(
                "| {} | {} | {reported} | {} | {} |",
                report.step_id, call.request.prompt_tokens, call.request.max_output_tokens, call.context_window
            );
            if call.request.usage.is_some_and(|u| u.prompt_tokens != call.request.prompt_tokens) {
                return Err(format!("step `{}`: the server counted the prompt differently", report.step_id).into());
            }
        }
    }
    println!("\nanswer:\n{}", state.last_model_response.unwrap_or_default().trim());
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Runs against the server named by `CTX_LLAMA_BASE_URL`; without it, says how to start one
    /// (and fails under CI, where `.ci/run` starts it).
    #[test]
    fn runs() {
        super::main().expect("the example runs");
    }
}
