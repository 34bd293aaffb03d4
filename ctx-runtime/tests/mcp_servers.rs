//! Agent steps whose tools come from real MCP servers: `@modelcontextprotocol/server-filesystem`
//! and `@modelcontextprotocol/server-everything` from npm, installed by `scripts/mcp-servers.sh`
//! and spawned by each test over stdio, or server-everything over Streamable HTTP on 127.0.0.1
//! (started by the same script). Listing, calling, a tool that reports an error, a server that
//! dies mid-run (a process killed, a URL stopped), a result of several MiB cut to the turn's
//! budget, a result over the byte limit, a server whose tool list changes between runs, and a
//! typed `pipeline!` whose agent offers a server's tools beside its own.
//!
//! Outside CI, without the servers (`CTX_MCP_*` unset), each test says so and passes; under
//! `CI=true` a missing server fails it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ctx_runtime::codes::ErrorCode;
use ctx_runtime::llm::offline::OfflineModel;
use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
use ctx_runtime::mcp::{McpError, McpOptions, McpTools};
use ctx_runtime::pipeline::{
    AgentReport, AgentSpec, CallModelSpec, LoadOptions, LoadedPipeline, McpServerSpec, ModelSource, ModelSpec,
    PipelineDef, PipelineError, PromptSpec, SettingsSpec, StepDef, StepDetail, StepEnv, StepKind, StepReport,
    ToolCallKind, UserPartSpec,
};
use ctx_runtime::{CtxError, PipelineState, Role, ToolCall};

mod mcp_support;
use mcp_support::{Servers, servers};

fn filesystem(s: &Servers, name: &str, root: &Path) -> McpServerSpec {
    McpServerSpec::new(name).command(Some(s.node.clone())).args(vec![s.filesystem.clone(), root.display().to_string()])
}

/// A pipeline with one agent step `answer` whose tools are `servers`' (cl100k, `window`
/// tokens, 500 of output).
fn definition(window: i64, servers: Vec<McpServerSpec>) -> PipelineDef {
    PipelineDef::new("Files")
        .model(ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(window))
                .max_tokens(Some(500))
                .encoding(Some("cl100k_base".into())),
        ))
        .settings(SettingsSpec::default().max_context_tokens(Some(1)).budget_safety_margin_tokens(Some(64)))
        .prompts(vec![PromptSpec::new("answer", Some("Answer from the files the tools read.".into()))])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::Agent(
                AgentSpec::new(
                    CallModelSpec::new("answer", "end")
                        .max_output_tokens(Some(500))
                        .user_parts(vec![UserPartSpec::new("user_question", "{}")]),
                    Vec::new(),
                    3,
                )
                .mcp_servers(servers),
            ),
        )])
}

fn agent(reports: &[StepReport]) -> &AgentReport {
    match reports.iter().map(|r| &r.detail).next() {
        Some(StepDetail::Agent(report)) => report,
        other => panic!("{other:?}"),
    }
}

/// A model that replies from a script and keeps every request; `before` runs before each reply
/// (with the reply's index).
struct Scripted {
    replies: Mutex<Vec<ChatResponse>>,
    seen: Mutex<Vec<ChatRequest>>,
    before: Box<dyn Fn(usize) + Send + Sync>,
}

impl Scripted {
    fn new(replies: Vec<ChatResponse>) -> Self {
        Scripted { replies: Mutex::new(replies), seen: Mutex::new(Vec::new()), before: Box::new(|_| {}) }
    }

    fn call(tool: &str, arguments: serde_json::Value) -> ChatResponse {
        ChatResponse::new("").tool_calls(vec![ToolCall::new("c1", tool, arguments.to_string())])
    }

    /// The content of every tool result the model was sent.
    fn tool_results(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        let last = seen.last().map(|r| r.messages.clone()).unwrap_or_default();
        last.iter().filter(|m| m.role == Role::Tool).map(|m| m.content.clone()).collect()
    }
}

impl ChatModel for Scripted {
    fn model_name(&self) -> &str {
        "scripted"
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let index = {
            let mut seen = self.seen.lock().unwrap();
            seen.push(request.clone());
            seen.len() - 1
        };
        (self.before)(index);
        let mut replies = self.replies.lock().unwrap();
        Ok(if replies.is_empty() { ChatResponse::new("done") } else { replies.remove(0) })
    }
}

/// A directory with `release-notes.md` and a file of `big_bytes` bytes, `big.txt`.
fn docs(big_bytes: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let notes = "# Release notes\n\nThe release train leaves on Thursdays at 10:00.\n";
    std::fs::write(dir.path().join("release-notes.md"), notes).unwrap();
    let line = "Every line of this file is a line of the big file, numbered by nothing at all.\n";
    std::fs::write(dir.path().join("big.txt"), line.repeat(big_bytes / line.len() + 1)).unwrap();
    dir
}

/// The canonical path the filesystem server reports and accepts (it resolves symlinks).
fn real(path: PathBuf) -> String {
    std::fs::canonicalize(path).unwrap().display().to_string()
}

fn mcp_source(err: &CtxError) -> &McpError {
    match err {
        CtxError::Pipeline(PipelineError::Tool { source, .. }) => {
            source.downcast_ref::<McpError>().unwrap_or_else(|| panic!("not an MCP error: {err}"))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_tools_are_listed_counted_by_the_contract_and_called() {
    let Some(s) = servers("the_tools_are_listed_counted_by_the_contract_and_called") else { return };
    let dir = docs(1_000);
    let server = filesystem(&s, "files", dir.path()).tools(vec!["read_text_file".into(), "list_directory".into()]);
    let def = definition(16_384, vec![server]);
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let listed = mcp.listed();
    let names: Vec<&str> = listed.iter().map(|t| t.tool.name.as_str()).collect();
    for expected in ["read_text_file", "list_directory", "write_file", "search_files"] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    assert!(listed.iter().all(|t| t.step == "answer" && t.server == "files"));

    let p = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new())).unwrap();
    let StepKind::Agent(spec) = &p.definition().steps[0].kind else { unreachable!() };
    let offered: Vec<&str> = spec.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(offered, ["read_text_file", "list_directory"], "in the server's order, only the allowed");
    // The contract counted exactly the schemas sent, with the model's tool rule.
    let counter = p.counter();
    let exact = counter.format().count_tools(counter, &spec.schemas()).unwrap();
    assert!(exact > 0);
    assert_eq!(p.contract_report().step("answer").unwrap().tool_schema_tokens, exact);

    // The offline model calls the first tool with the question as its `path`, and answers with
    // the lines of the result that share a term with it (`release`).
    let model = OfflineModel::new(p.counter().clone());
    let env = StepEnv::builder().model(&model).tools(&mcp);
    let question = real(dir.path().join("release-notes.md"));
    let (state, reports) = p.run(PipelineState::new(question), &env).await.unwrap();
    let report = agent(&reports);
    assert_eq!(report.tool_calls.len(), 1);
    assert_eq!(
        (report.tool_calls[0].name.as_str(), report.tool_calls[0].kind),
        ("read_text_file", ToolCallKind::Handled)
    );
    assert_eq!(report.tool_schema_tokens, exact);
    let answer = state.last_model_response.unwrap();
    assert!(answer.contains("Thursdays at 10:00"), "{answer}");
    for r in &report.requests {
        assert!(r.request.prompt_tokens + r.request.max_output_tokens <= 16_384);
        assert_eq!(r.request.usage.map(|u| u.prompt_tokens), Some(r.request.prompt_tokens));
    }
    mcp.close().await;
}

#[tokio::test]
async fn a_tool_error_is_told_to_the_model_and_a_protocol_error_fails_the_step() {
    let Some(s) = servers("a_tool_error_is_told_to_the_model_and_a_protocol_error_fails_the_step") else { return };
    let dir = docs(1_000);
    let def = definition(16_384, vec![filesystem(&s, "files", dir.path()).tools(vec!["read_text_file".into()])]);
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let p = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new())).unwrap();
    // A path outside the allowed directory: the server answers with a result marked `isError`.
    let model = Scripted::new(vec![Scripted::call("read_text_file", serde_json::json!({ "path": "/etc/hostname" }))]);
    let env = StepEnv::builder().model(&model).tools(&mcp);
    let (state, reports) = p.run(PipelineState::new("q"), &env).await.unwrap();
    assert_eq!(agent(&reports).tool_calls[0].kind, ToolCallKind::Handled);
    let results = model.tool_results();
    assert_eq!(results.len(), 1);
    assert!(results[0].starts_with("error: "), "{}", results[0]);
    assert!(results[0].to_lowercase().contains("denied"), "{}", results[0]);
    assert_eq!(state.last_model_response.as_deref(), Some("done"));

    // Arguments the server's schema rejects: whichever way the server answers, the model is
    // told (a result marked `isError`) or the step fails naming the server and the tool.
    let model = Scripted::new(vec![Scripted::call("read_text_file", serde_json::json!({ "path": 42 }))]);
    let env = StepEnv::builder().model(&model).tools(&mcp);
    match p.run(PipelineState::new("q"), &env).await {
        Ok(_) => assert!(model.tool_results()[0].starts_with("error: "), "{:?}", model.tool_results()),
        Err(err) => {
            assert_eq!(err.code(), "AGENT_TOOL_FAILED");
            let mcp_err = mcp_source(&err);
            assert_eq!(mcp_err.code(), "MCP_TOOL_FAILED");
            assert!(mcp_err.to_string().contains("`files` failed tool `read_text_file`"), "{mcp_err}");
        }
    }
    mcp.close().await;
}

#[tokio::test]
async fn a_server_that_dies_mid_run_fails_the_step_naming_it() {
    let Some(s) = servers("a_server_that_dies_mid_run_fails_the_step_naming_it") else { return };
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("server.pid");
    // The server records its own process id, so the test kills exactly the process it started.
    let script = format!("echo $$ > '{}'; exec '{}' '{}' stdio", pidfile.display(), s.node, s.everything);
    let server = McpServerSpec::new("everything")
        .command(Some("sh".into()))
        .args(vec!["-c".into(), script])
        .tools(vec!["echo".into()]);
    let def = definition(16_384, vec![server]);
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let p = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new())).unwrap();
    let mut model = Scripted::new(vec![Scripted::call("echo", serde_json::json!({ "message": "hello" }))]);
    let pid: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    model.before = Box::new(move |index| {
        if index == 0 {
            let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
            assert!(killed.success());
        }
    });
    let env = StepEnv::builder().model(&model).tools(&mcp);
    let state = PipelineState::new("q");
    let err = p.run(state, &env).await.unwrap_err();
    assert_eq!(err.code(), "AGENT_TOOL_FAILED", "{err}");
    let mcp_err = mcp_source(&err);
    assert_eq!(mcp_err.code(), "MCP_SERVER_CLOSED", "{mcp_err}");
    let text = mcp_err.to_string();
    assert!(text.contains("`everything`") && text.contains("`echo`"), "{text}");
    mcp.close().await;
}

#[tokio::test]
async fn a_result_of_several_mib_is_cut_to_the_turn_and_one_over_the_limit_is_refused() {
    let Some(s) = servers("a_result_of_several_mib_is_cut_to_the_turn_and_one_over_the_limit_is_refused") else {
        return;
    };
    let dir = docs(5 * 1024 * 1024);
    let def = definition(8_192, vec![filesystem(&s, "files", dir.path()).tools(vec!["read_text_file".into()])]);
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let p = LoadedPipeline::load(def.clone(), mcp.load_options(LoadOptions::new())).unwrap();
    let model = OfflineModel::new(p.counter().clone());
    let env = StepEnv::builder().model(&model).tools(&mcp);
    let question = real(dir.path().join("big.txt"));
    let (_, reports) = p.run(PipelineState::new(question.clone()), &env).await.unwrap();
    let report = agent(&reports);
    let call = &report.tool_calls[0];
    assert!(call.truncated, "5 MiB cannot fit an 8K window");
    assert!(call.tokens <= call.available, "{call:?}");
    for r in &report.requests {
        assert!(r.request.prompt_tokens + r.request.max_output_tokens <= 8_192, "{r:?}");
    }
    mcp.close().await;

    let mcp = McpTools::connect(&def, McpOptions::new().max_result_bytes(1024 * 1024)).await.unwrap();
    let p = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new())).unwrap();
    let env = StepEnv::builder().model(&model).tools(&mcp);
    let err = p.run(PipelineState::new(question), &env).await.unwrap_err();
    let mcp_err = mcp_source(&err);
    assert_eq!(mcp_err.code(), "MCP_RESULT_TOO_LARGE");
    assert!(matches!(mcp_err, McpError::ResultTooLarge { bytes, limit: 1_048_576, .. } if *bytes > 5 * 1024 * 1024));
    mcp.close().await;
}

#[tokio::test]
async fn a_server_whose_tool_list_changes_between_runs_is_a_load_error_naming_it() {
    let Some(s) = servers("a_server_whose_tool_list_changes_between_runs_is_a_load_error_naming_it") else { return };
    let dir = docs(1_000);
    // One declaration, a command whose server changes between two loads (an upgrade behind
    // the same command line): first the everything server, then the filesystem server.
    let script = dir.path().join("server.sh");
    let write = |target: &str| std::fs::write(&script, format!("exec '{}' {target}\n", s.node)).unwrap();
    let server = McpServerSpec::new("tools").command(Some("sh".into())).args(vec![script.display().to_string()]);
    // The everything server's schemas cost 638 tokens, the filesystem server's 1,177 (cl100k):
    // with 500 of output, 64 of margin and the prompt, the first fit 1,600 tokens, the second not.
    let def = definition(1_600, vec![server.clone()]);

    write(&format!("'{}' stdio", s.everything));
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let first = LoadedPipeline::load(def.clone(), mcp.load_options(LoadOptions::new()));
    let fits = first.expect("the everything server's tools fit a 1,600-token window");
    assert!(fits.contract_report().step("answer").unwrap().tool_schema_tokens > 0);
    mcp.close().await;

    write(&format!("'{}' '{}'", s.filesystem, dir.path().display()));
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let Err(CtxError::Config(issues)) = LoadedPipeline::load(def.clone(), mcp.load_options(LoadOptions::new())) else {
        panic!("the filesystem server's tools should not fit");
    };
    let issue = &issues.issues[0];
    assert_eq!(issue.code, "MCP_TOOLS_DO_NOT_FIT", "{issues}");
    assert_eq!(issue.path.to_string(), "steps[0].mcp_servers[0]");
    assert!(issue.message.contains("MCP server `tools`") && issue.message.contains("(largest: `"), "{}", issue.message);
    mcp.close().await;

    // A tool the step chose that the new server does not list.
    let def = definition(16_384, vec![server.tools(vec!["echo".into()])]);
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let Err(CtxError::Config(issues)) = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new())) else {
        panic!("`echo` is gone");
    };
    assert_eq!(issues.issues[0].code, "MCP_TOOL_REJECTED", "{issues}");
    assert_eq!(issues.issues[0].path.to_string(), "steps[0].mcp_servers[0].tools[0]");
    mcp.close().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_is_named_with_what_it_said() {
    let Some(s) = servers("a_server_that_cannot_start_is_named_with_what_it_said") else { return };
    let missing = McpServerSpec::new("missing").command(Some("/nonexistent/mcp-server".into()));
    let err = McpTools::connect(&definition(16_384, vec![missing]), McpOptions::new()).await.unwrap_err();
    assert_eq!(err.code(), "MCP_SERVER_START");
    assert!(err.to_string().contains("`missing` (/nonexistent/mcp-server)"), "{err}");

    let exits = McpServerSpec::new("exits")
        .command(Some(s.node.clone()))
        .args(vec!["-e".into(), "console.error('no config given'); process.exit(3)".into()]);
    let err = McpTools::connect(&definition(16_384, vec![exits]), McpOptions::new()).await.unwrap_err();
    assert_eq!(err.code(), "MCP_SERVER_START");
    assert!(err.to_string().contains("no config given"), "{err}");
}

// Streamable HTTP: server-everything on 127.0.0.1, started by `scripts/mcp-servers.sh start`
// (`.ci/run`), or by a test itself when it stops the server.

/// A server reached by `url`, offering `echo`.
fn by_url(url: &str) -> McpServerSpec {
    McpServerSpec::new("everything").url(Some(url.to_owned())).tools(vec!["echo".into()])
}

#[tokio::test]
async fn a_server_by_url_is_listed_counted_and_called() {
    let Some((_, url)) = mcp_support::http_server("a_server_by_url_is_listed_counted_and_called") else { return };
    let def = definition(16_384, vec![by_url(&url)]);
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let names: Vec<String> = mcp.listed().into_iter().map(|t| t.tool.name).collect();
    assert!(names.iter().any(|n| n == "echo"), "{names:?}");
    let p = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new())).unwrap();
    let StepKind::Agent(spec) = &p.definition().steps[0].kind else { unreachable!() };
    assert_eq!(spec.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["echo"]);
    let counter = p.counter();
    let exact = counter.format().count_tools(counter, &spec.schemas()).unwrap();
    assert_eq!(p.contract_report().step("answer").unwrap().tool_schema_tokens, exact);

    let model = Scripted::new(vec![Scripted::call("echo", serde_json::json!({ "message": "over HTTP" }))]);
    let env = StepEnv::builder().model(&model).tools(&mcp);
    let (_, reports) = p.run(PipelineState::new("q"), &env).await.unwrap();
    assert_eq!(agent(&reports).tool_calls[0].kind, ToolCallKind::Handled);
    assert_eq!(model.tool_results(), ["Echo: over HTTP"]);

    // A call the server's schema refuses: the model is told (`isError`), or the step fails
    // naming the server and the tool.
    let model = Scripted::new(vec![Scripted::call("echo", serde_json::json!({ "message": 42 }))]);
    let env = StepEnv::builder().model(&model).tools(&mcp);
    match p.run(PipelineState::new("q"), &env).await {
        Ok(_) => assert!(model.tool_results()[0].starts_with("error: "), "{:?}", model.tool_results()),
        Err(err) => {
            assert_eq!(err.code(), "AGENT_TOOL_FAILED");
            let mcp_err = mcp_source(&err);
            assert_eq!(mcp_err.code(), "MCP_TOOL_FAILED");
            assert!(mcp_err.to_string().contains("`everything` failed tool `echo`"), "{mcp_err}");
        }
    }
    mcp.close().await;
}

#[tokio::test]
async fn a_server_by_url_stopped_mid_run_fails_the_step_naming_it() {
    let Some(s) = servers("a_server_by_url_stopped_mid_run_fails_the_step_naming_it") else { return };
    // A server of this test's own, on a port of its own, stopped by the script before the call.
    let server = std::sync::Arc::new(mcp_support::OwnHttpServer::start(&s, 18_397));
    let def = definition(16_384, vec![by_url(&server.url)]);
    let mcp = McpTools::connect(&def, McpOptions::new()).await.unwrap();
    let p = LoadedPipeline::load(def, mcp.load_options(LoadOptions::new())).unwrap();
    let mut model = Scripted::new(vec![Scripted::call("echo", serde_json::json!({ "message": "hello" }))]);
    let stopping = std::sync::Arc::clone(&server);
    model.before = Box::new(move |index| {
        if index == 0 {
            stopping.stop();
        }
    });
    let env = StepEnv::builder().model(&model).tools(&mcp);
    let err = p.run(PipelineState::new("q"), &env).await.unwrap_err();
    assert_eq!(err.code(), "AGENT_TOOL_FAILED", "{err}");
    assert!(err.to_string().contains("`answer`"), "the step is named: {err}");
    let mcp_err = mcp_source(&err);
    assert_eq!(mcp_err.code(), "MCP_SERVER_CLOSED", "{mcp_err}");
    let text = mcp_err.to_string();
    assert!(text.contains("`everything`") && text.contains("`echo`") && text.contains(&server.url), "{text}");
    mcp.close().await;
}

#[tokio::test]
async fn a_server_by_url_that_is_not_there_or_has_no_token_does_not_start() {
    let missing = by_url("http://127.0.0.1:9/mcp");
    let err = McpTools::connect(&definition(16_384, vec![missing.clone()]), McpOptions::new()).await.unwrap_err();
    assert_eq!(err.code(), "MCP_SERVER_START");
    assert!(err.to_string().contains("`everything` (http://127.0.0.1:9/mcp) could not be started"), "{err}");
    let token = missing.bearer_token_env(Some("CTX_TEST_MCP_TOKEN_NEVER_SET".into()));
    let err = McpTools::connect(&definition(16_384, vec![token]), McpOptions::new()).await.unwrap_err();
    assert_eq!(err.code(), "MCP_SERVER_START");
    assert!(err.to_string().contains("`CTX_TEST_MCP_TOKEN_NEVER_SET` (its `bearer_token_env`) is not set"), "{err}");
}

// The typed API: a `pipeline!` whose agent step has a tool of its own and the tools of an MCP
// server, whose command (a shell) finds the server where `scripts/mcp-servers.sh env` says.
ctx::pipeline! {
    /// Echoes through the everything server and shouts through a Rust tool.
    pub pipeline Echoes {
        model { context_window: 16_384, max_tokens: 500, encoding: cl100k_base }
        settings { max_context_tokens: 1, budget_safety_margin_tokens: 64 }
        prompts { answer: "Answer with what the tools return." }
        steps {
            answer: agent {
                prompt_key: answer,
                tools: [
                    shout {
                        description: "Says the message in capitals",
                        parameters: r#"{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}"#,
                    },
                ],
                mcp_servers: [
                    everything {
                        command: "sh",
                        args: ["-c", "exec \"$CTX_MCP_NODE\" \"$CTX_MCP_EVERYTHING\" stdio"],
                        tools: [echo],
                    },
                ],
                max_tool_calls: 2,
                max_output_tokens: 500,
                next: end,
            },
        }
    }
}

struct Shout;

impl EchoesTools for Shout {
    async fn shout(
        &self,
        request: ctx::pipeline::ToolRequest<'_>,
    ) -> Result<ctx::pipeline::ToolOutput, ctx::pipeline::BoxError> {
        let args: serde_json::Value = request.args()?;
        Ok(ctx::pipeline::ToolOutput::Text(args["message"].as_str().unwrap_or_default().to_uppercase()))
    }
}

#[tokio::test]
async fn a_typed_pipeline_runs_with_the_tools_its_servers_list_and_its_own() {
    let Some(_) = servers("a_typed_pipeline_runs_with_the_tools_its_servers_list_and_its_own") else { return };
    // Loaded without the servers' listing, it does not load: its contract would leave them out.
    let Err(CtxError::Config(issues)) = Echoes::new() else { panic!("loaded without its MCP tools") };
    assert_eq!(issues.issues[0].code, "MCP_SERVER_NOT_CONNECTED", "{issues}");

    let mcp = McpTools::connect(&Echoes::definition(), McpOptions::new()).await.unwrap();
    let pipeline = Echoes::load(mcp.load_options(LoadOptions::new())).unwrap();
    let StepKind::Agent(spec) = &pipeline.pipeline().definition().steps[0].kind else { unreachable!() };
    assert_eq!(spec.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["shout", "echo"]);
    let counter = pipeline.pipeline().counter();
    let exact = counter.format().count_tools(counter, &spec.schemas()).unwrap();
    assert_eq!(pipeline.pipeline().contract_report().step("answer").unwrap().tool_schema_tokens, exact);

    let call = |id: &str, tool: &str| {
        ChatResponse::new("").tool_calls(vec![ToolCall::new(id, tool, r#"{"message":"typed"}"#.to_owned())])
    };
    let model = Scripted::new(vec![call("c1", "echo"), call("c2", "shout")]);
    let env = EchoesEnv { model: &model, tools: &Shout, mcp: &mcp };
    let (state, reports) = pipeline.run(PipelineState::new("q"), &env).await.unwrap();
    let report = agent(&reports);
    assert!(report.tool_calls.iter().all(|c| c.kind == ToolCallKind::Handled), "{:?}", report.tool_calls);
    assert_eq!(model.tool_results(), ["Echo: typed", "TYPED"]);
    assert_eq!(state.last_model_response.as_deref(), Some("done"));
    mcp.close().await;
}

// The DSL's declaration of a server by URL, read by the one decoder YAML uses too (not run).
ctx::pipeline! {
    /// Offers the tools of a server reached by URL with a token from `MCP_TOKEN`.
    pub pipeline ByUrl {
        model { context_window: 16_384, max_tokens: 500, encoding: cl100k_base }
        settings { max_context_tokens: 1, budget_safety_margin_tokens: 64 }
        prompts { answer: "Answer with what the tools return." }
        steps {
            answer: agent {
                prompt_key: answer,
                mcp_servers: [
                    web { url: "http://127.0.0.1:3001/mcp", bearer_token_env: "MCP_TOKEN", tools: [echo] },
                ],
                max_tool_calls: 1,
                max_output_tokens: 500,
                next: end,
            },
        }
    }
}

#[test]
fn the_dsl_declares_a_server_by_url_with_the_variable_of_its_token() {
    let StepKind::Agent(spec) = &ByUrl::definition().steps[0].kind else { unreachable!() };
    let web = McpServerSpec::new("web")
        .url(Some("http://127.0.0.1:3001/mcp".into()))
        .bearer_token_env(Some("MCP_TOKEN".into()))
        .tools(vec!["echo".into()]);
    assert_eq!(spec.mcp_servers, [web]);
}
