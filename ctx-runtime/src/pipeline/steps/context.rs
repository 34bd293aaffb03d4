//! The request of a model step that names a declared context (`call_model { context: NAME }`,
//! `agent { context: NAME }`): the pipeline's context assembler
//! ([`LoadedPipeline::assembler`]) assembles it, and the step then negotiates, guards, sends,
//! prices and reports it as any model request (`request.rs`).
//!
//! * Inputs: each `{input.<name>}` the context declares is read from the state as a `user_parts`
//!   source is ([`PipelineState::render_source`]: a text field or a variable); a variable the state
//!   does not hold fails the step with `PIPELINE_MISSING_SOURCE` before anything is assembled.
//!   A context that takes `context_blocks` as an input gets the fetched texts waiting in
//!   `node_texts` appended to it first, as any step that renders the context (`evidence.rs`).
//! * The base system prompt is the text of the step's `prompt_key`; the user message falls back
//!   to the question (`user_question`) when the context has no `user` message.
//! * History: the pipeline's `history_dialog` goes to a context that declares a `history`
//!   message, and only to such a context.
//! * Packs: drawn through the retriever of the run's environment
//!   ([`StepEnv::retriever_backend`]), which answers every retriever the pipeline declares; a
//!   pipeline without retrievers needs none.
//!
//! The assembly fits the context's input budget, which the contract checked against the window
//! with the step's output and the margin; the last guard still counts the exact request. Any
//! failure of the assembly is a [`PipelineError::Context`] naming the step, and leaves the state
//! as it was.

use crate::chat::ChatMessage;
use crate::engine::{AssemblyInput, ContextAssembly, MessageSpec};
use crate::error::CtxError;
use crate::pipeline::env::{StepEnv, need};
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;

/// The assembly of context `name` for step `step` (of kind `kind`), with `system` (the text of
/// its `prompt_key`) as the base system prompt; and, when the context draws the pipeline's
/// history, that history as the assembly kept it (the oldest messages it dropped left out).
pub(crate) async fn assemble(
    p: &LoadedPipeline,
    (step, kind): (&str, &'static str),
    name: &str,
    system: &str,
    state: &PipelineState,
    env: &StepEnv<'_>,
) -> Result<(ContextAssembly, Option<Vec<ChatMessage>>), CtxError> {
    let context_error = |source| PipelineError::Context { step: step.to_owned(), source: Box::new(source) };
    let (Some(assembler), Some(decl)) = (p.assembler(), p.definition().contexts.context(name)) else {
        // Validation keeps a step's context declared, and a pipeline with contexts has an
        // assembler; a definition changed behind the loader's back is this error, not a panic.
        return Err(context_error(crate::engine::EngineError::UnknownContext {
            name: name.to_owned(),
            declared: p.definition().contexts.contexts.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
        })
        .into());
    };
    let mut input = AssemblyInput::new().base_system_prompt(system).user_message(state.user_question.clone());
    for source in &decl.inputs {
        let value = state
            .render_source(source)
            .ok_or_else(|| PipelineError::MissingSource { step: step.to_owned(), source_name: source.clone() })?;
        input = input.input(source.clone(), value);
    }
    let draws_history = decl.messages.iter().any(|m| matches!(m, MessageSpec::History));
    if draws_history {
        input = input.history(state.history_dialog.clone());
    }
    let assembly = if assembler.has_retrievers() {
        let retriever = need(env.retriever_backend(), step, kind, "Retriever", "retriever")?;
        assembler.assemble_with(name, &input, retriever).await
    } else {
        assembler.assemble(name, &input).await
    }
    .map_err(context_error)?;
    // The engine drops history oldest first; what it kept is the tail.
    let kept =
        draws_history.then(|| state.history_dialog.get(assembly.report.history_dropped..).unwrap_or_default().to_vec());
    tracing::info!(
        target: "ctx::pipeline",
        step,
        context = name,
        tokens = assembly.report.total_tokens,
        budget = assembly.report.max_tokens,
        packs = assembly.report.packs.len(),
        history_dropped = assembly.report.history_dropped,
        "context assembled"
    );
    Ok((assembly, kept))
}
