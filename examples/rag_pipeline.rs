//! Retrieval-augmented answers about a SQL/.NET code base, inside an 8k window.
//!
//! ```sh
//! cargo run --example rag_pipeline -- "How is the invoice total computed?"
//! cargo run --example rag_pipeline -- --mermaid
//! CTX_BASE_URL=http://localhost:11434/v1 CTX_MODEL=llama3.1:8b cargo run --features openai --example rag_pipeline
//! CTX_LLAMA_N_CTX=8192 scripts/llama-server.sh start && eval "$(scripts/llama-server.sh env)" && \
//!     cargo run --features llama --example rag_pipeline   # SmolLM2-135M on this machine, its own tokenizer
//! ```
//!
//! The `CodebaseQa` pipeline (in `rag_pipeline/pipeline.rs`) searches `examples/codebase/` with
//! BM25, reads the hits and the files they name in batches, lets `manage_context_budget` compact
//! SQL and C# as the context fills up, summarises the context when a batch no longer fits (at
//! most twice per question, under a `loop_guard`), and answers with the conversation's history.
//! Every request is counted with the real tokenizer before it is sent. Without `CTX_BASE_URL`
//! the model is offline and extractive: it quotes the lines of the context that match the
//! question, with the ids of their files; that needs only the features the command above builds
//! (`bm25`, which the package's dev-dependency on itself turns on). `ctx-tests/tests/rag_pipeline.rs`
//! runs the same code.

#[path = "rag_pipeline/mod.rs"]
mod rag;

use std::process::ExitCode;

#[cfg(feature = "llama")]
use ctx::llm::llama_cpp::LocalModel;
use ctx::pipeline::LoadOptions;

use rag::pipeline::CodebaseQa;
use rag::{Args, BoxError, Demo, Model, USAGE, choose_model, codebase_dir};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.help {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if args.mermaid {
        println!("{}", CodebaseQa::MERMAID);
        return ExitCode::SUCCESS;
    }
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> Result<(), BoxError> {
    let (demo, model) = demo_and_model(args)?;
    println!("Code base: {} ({} files indexed with BM25).", codebase_dir().display(), demo.index().len());
    println!("Model: {}.", model.describe());
    let trace = demo.conversation(&args.questions, model.as_chat_model()).await?;
    print!("{}", trace.render());
    Ok(())
}

/// A local llama-cpp-python server (scripts/llama-server.sh) brings its own window and tokenizer.
#[cfg(feature = "llama")]
fn demo_and_model(args: &Args) -> Result<(Demo, Model), BoxError> {
    match if args.offline { None } else { LocalModel::from_env()? } {
        Some(local) => {
            let demo = Demo::with_local_model(codebase_dir(), &local, LoadOptions::from_env())?;
            Ok((demo, Model::Server(local.client().clone())))
        }
        None => offline_or_server(args),
    }
}

#[cfg(not(feature = "llama"))]
fn demo_and_model(args: &Args) -> Result<(Demo, Model), BoxError> {
    // `ctx::llm::llama_cpp::ENV_BASE_URL`, which only feature `llama` builds.
    const ENV_LLAMA_BASE_URL: &str = "CTX_LLAMA_BASE_URL";
    if !args.offline && std::env::var(ENV_LLAMA_BASE_URL).is_ok_and(|url| !url.trim().is_empty()) {
        return Err(rag::needs_feature(ENV_LLAMA_BASE_URL, "llama"));
    }
    offline_or_server(args)
}

/// The offline model, or the server `CTX_BASE_URL` names.
fn offline_or_server(args: &Args) -> Result<(Demo, Model), BoxError> {
    let demo = Demo::new(codebase_dir(), LoadOptions::from_env())?;
    let model = choose_model(args.offline, |name| std::env::var(name).ok(), demo.pipeline().pipeline().counter())?;
    Ok((demo, model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_offline() {
        let args = Args::parse(["--offline".to_owned()]).expect("valid arguments");
        run(&args).await.expect("the example runs offline");
    }
}
