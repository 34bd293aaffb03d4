//! The main example (`examples/rag_pipeline.rs`) pointed at the local model of
//! `scripts/llama-server.sh`: the demo's pipeline is loaded with the server's context window and
//! counts with the server's tokenizer. Its budgets are written for an 8k model, so against the
//! 2,048-token server of CI the budget contract refuses it at load, naming the window; against a
//! server started with `CTX_LLAMA_N_CTX=8192` it answers a question, and every request's
//! prediction equals the server's count.
//!
//! Without `CTX_LLAMA_BASE_URL` the test is skipped with a message (and fails under CI).

#[path = "../../examples/rag_pipeline/mod.rs"]
#[allow(dead_code, reason = "this test uses the demo's local-model path only")]
mod rag;

use std::io::Write as _;

use ctx::ErrorCode;
use ctx::llm::llama_cpp::{ENV_BASE_URL, LocalModel};
use ctx::pipeline::{LoadOptions, StepDetail};

use rag::{Demo, SAMPLE_QUESTION, codebase_dir};

#[tokio::test]
async fn the_demo_runs_in_the_local_servers_window_with_its_tokenizer() {
    let Some(local) = LocalModel::from_env().expect("the server named by CTX_LLAMA_BASE_URL answers") else {
        assert!(std::env::var_os("CI").is_none(), "{ENV_BASE_URL} is not set under CI: .ci/run must start the server");
        let _ = writeln!(
            std::io::stderr(),
            "skipped the_demo_runs_in_the_local_servers_window_with_its_tokenizer: {ENV_BASE_URL} is not set"
        );
        return;
    };
    let loaded = Demo::with_local_model(codebase_dir(), &local, LoadOptions::new());
    if local.window() < 8_192 {
        let err = loaded.err().expect("an 8k pipeline cannot load into a smaller window");
        let text = err.to_string();
        assert_eq!(err.code(), "BUDGET_CONTRACT_VIOLATED", "{text}");
        assert!(text.contains(&local.window().to_string()), "{text}");
        return;
    }
    let demo = loaded.expect("the demo loads into the server's window");
    assert_eq!(demo.pipeline().pipeline().context_window(), local.window());
    let trace = demo.conversation(&[SAMPLE_QUESTION.to_owned()], local.client()).await.expect("the demo answers");
    let calls: Vec<_> = trace.turns[0]
        .steps
        .iter()
        .filter_map(|s| match &s.detail {
            StepDetail::CallModel(c) => Some(c),
            _ => None,
        })
        .collect();
    assert!(!calls.is_empty());
    for call in calls {
        assert_eq!(call.request.usage.map(|u| u.prompt_tokens), Some(call.request.prompt_tokens));
        assert!(call.request.prompt_tokens + call.request.max_output_tokens <= local.window());
    }
}
