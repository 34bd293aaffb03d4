//! The contract inequality, checked for every `call_model` and `agent` step:
//!
//! ```text
//! fixed_prompt_tokens(step) + tool_schema_tokens (agent) + max_history_tokens (if use_history) + max_context_tokens
//!     + Σ input budgets (the question, variables, …) + max_output_tokens(step) + budget_safety_margin_tokens
//!     <=  model_context_window
//! ```
//!
//! A step whose request is a declared context's assembly ([`CallModelCheck::context`]) has one
//! input term instead of the first three and `max_context_tokens`: the context's input budget
//! (see [`super::context`]).
//!
//! Under `fail_fast` every failing step is an issue that names each term and the overflow. Under
//! `auto_clamp` the limits are lowered in memory (the context budget first, then the step's
//! output), each change logged as a warning and listed in the [`ContractReport`]. Missing or
//! invalid values are errors under both policies.
//!
//! Every `user_parts` value other than the context (the question, variables, an earlier reply) is
//! a term with its own budget ([`super::inputs`]): declared, derived from another declaration, or
//! by default the room the window leaves. The safety margin is left for the non-additivity of BPE
//! where values meet their templates, and [`super::guard_request`] checks the exact request
//! before it is sent.
//!
//! Issues about the model and the settings are reported under `model.*` and `settings.*`, about
//! a step under its [`CallModelCheck::at`].

use super::context::ContextTerm;
use super::input_budget::InputBudget;
use super::inputs::{self, Declared, Pending};
use super::report::{Clamp, ClampTarget, ContractReport, StepBudget};
use super::terms::{OutputLimit, OutputSource, fixed_prompt_tokens, output_limit};
use super::usable::{least_context, least_output, lowered};
use crate::codes::Code;
use crate::config::{
    LimitsPolicy, ModelConfig, Settings, invalid_context_window, invalid_max_context_tokens, missing_history_budget,
};
use crate::pipeline::definition::{AgentSpec, CallModelSpec};
use crate::tokens::{Counting, TokenCounter};
use crate::validation::{ConfigIssue, FieldPath};

/// One `call_model` step to check.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallModelCheck<'a> {
    /// The step's path (`steps.<id>`); issues about the step are reported under it.
    pub at: FieldPath,
    /// The step id.
    pub step_id: &'a str,
    /// The step as written.
    pub spec: &'a CallModelSpec,
    /// The text of the step's `prompt_key`.
    pub system_prompt: &'a str,
    /// For an `agent` step, the whole step: its tool schemas are part of every request that
    /// offers them, and its turn budget must leave the output its room.
    pub agent: Option<&'a AgentSpec>,
    /// For a step whose request is a declared context's assembly, that context's term: its input
    /// budget replaces the fixed prompt, the history and `max_context_tokens`.
    pub context: Option<ContextTerm<'a>>,
    /// For a step that names one of the pipeline's `models` (`model: NAME`), that model: its
    /// window, output limit and counter replace the default model's for this step.
    pub model: Option<StepModel<'a>>,
    /// The largest `evidence_tokens` of the pipeline's `fetch_node_texts` steps (0 without one):
    /// a context budget the help suggests stays above it, which the evidence rule requires.
    pub evidence_tokens: usize,
}

/// The named model a step uses (`model: NAME`), resolved: what its contract is checked against.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct StepModel<'a> {
    /// The name declared in `models { … }`.
    pub name: &'a str,
    /// Its limits.
    pub config: &'a ModelConfig,
    /// Its counter (its encoding with its chat format, or its own files).
    pub counter: &'a TokenCounter,
}

impl<'a> StepModel<'a> {
    /// The named model `name` with its limits and counter.
    pub fn new(name: &'a str, config: &'a ModelConfig, counter: &'a TokenCounter) -> Self {
        StepModel { name, config, counter }
    }
}

impl<'a> CallModelCheck<'a> {
    /// A `call_model` step `step_id` at `at`, as written in `spec`, whose prompt's text is
    /// `system_prompt`.
    pub fn new(at: FieldPath, step_id: &'a str, spec: &'a CallModelSpec, system_prompt: &'a str) -> Self {
        CallModelCheck { at, step_id, spec, system_prompt, agent: None, context: None, model: None, evidence_tokens: 0 }
    }

    /// The step is this `agent` step.
    #[must_use]
    pub fn with_agent(mut self, agent: &'a AgentSpec) -> Self {
        self.agent = Some(agent);
        self
    }

    /// The step uses the named model `model` instead of the default.
    #[must_use]
    pub fn with_model(mut self, model: StepModel<'a>) -> Self {
        self.model = Some(model);
        self
    }

    /// The step's request is the assembly of a declared context ([`super::context_term`]).
    #[must_use]
    pub fn with_context(mut self, context: ContextTerm<'a>) -> Self {
        self.context = Some(context);
        self
    }

    /// The pipeline's largest `evidence_tokens` is `tokens` ([`Self::evidence_tokens`]).
    #[must_use]
    pub fn with_evidence_tokens(mut self, tokens: usize) -> Self {
        self.evidence_tokens = tokens;
        self
    }
}

impl CallModelCheck<'_> {
    /// The step's kind keyword (`call_model` or `agent`), for messages.
    pub fn kind(&self) -> &'static str {
        if self.agent.is_some() { "agent" } else { "call_model" }
    }
}

/// A step whose terms could all be determined.
struct Terms<'c, 'a> {
    check: &'c CallModelCheck<'a>,
    /// The step's model: its named model, else the default.
    model: &'c ModelConfig,
    fixed: usize,
    /// The tool schemas' exact cost (agent steps).
    tools: usize,
    /// What an empty request costs (the reply priming), for the default turn budget.
    priming: usize,
    history: usize,
    output: OutputLimit,
    /// Whether `fixed` and `tools` are counts or estimates.
    counting: Counting,
    /// The user message's values besides the context, declared, derived or waiting for the
    /// default.
    inputs: Vec<Pending>,
}

impl Terms<'_, '_> {
    /// Everything but the context budget and the undeclared inputs, in `u128` so no
    /// configuration can overflow it.
    fn rest(&self, margin: usize) -> u128 {
        self.fixed as u128
            + self.tools as u128
            + self.history as u128
            + inputs::known_sum(&self.inputs).0
            + self.output.tokens as u128
            + margin as u128
    }

    /// How many of the step's inputs take the default budget.
    fn defaults(&self) -> usize {
        inputs::known_sum(&self.inputs).1
    }

    /// The context budget this step's request can hold: `max_context_tokens` (`ctx`), or 0 for a
    /// step that assembles a declared context (its input budget, in `fixed`, holds everything).
    fn context(&self, ctx: usize) -> usize {
        if self.check.context.is_some() { 0 } else { ctx }
    }

    /// Whose window it is, for messages: `the model's`, or `model `small`'s` for a named model.
    fn whose(&self) -> String {
        match &self.check.model {
            Some(m) => format!("model `{}`'s", m.name),
            None => "the model's".to_owned(),
        }
    }

    /// The step's window, for messages: `the 8192-token window` (of model `small`).
    fn window_named(&self) -> String {
        let window = self.model.context_window;
        match &self.check.model {
            Some(m) => format!("the {window}-token window of model `{}`", m.name),
            None => format!("the {window}-token window"),
        }
    }
}

/// Checks the contract for every step under `settings.policy`.
///
/// Returns the budgets in effect, or every problem found: missing or invalid values (both
/// policies), each violating step (`BUDGET_CONTRACT_VIOLATED`, `fail_fast`), each step that
/// cannot be made to fit (`BUDGET_CONTRACT_UNSATISFIABLE`, `auto_clamp`). Pure: no I/O, and
/// `auto_clamp` warnings are logged only when the whole check succeeds.
pub fn check_contract(
    model: &ModelConfig,
    settings: &Settings,
    steps: &[CallModelCheck<'_>],
    counter: &TokenCounter,
) -> Result<ContractReport, Vec<ConfigIssue>> {
    let mut issues = Vec::new();
    let root = FieldPath::root();
    if model.context_window == 0 {
        issues.push(invalid_context_window(root.key("model").key("context_window"), "context_window", 0));
    }
    // Only a pipeline whose requests never render the context may have a context budget of 0.
    let renders_context =
        steps.iter().any(|c| c.context.is_none() && c.spec.parts().iter().any(|p| p.source == "context_blocks"));
    if settings.max_context_tokens == 0 && renders_context {
        issues.push(invalid_max_context_tokens(root.key("settings").key("max_context_tokens"), 0));
    }

    let mut terms = Vec::with_capacity(steps.len());
    for check in steps {
        let (model, counter) = check.model.map_or((model, counter), |m| (m.config, m.counter));
        if check.model.is_some() && model.context_window == 0 {
            issues.push(invalid_context_window(check.at.key("model"), "context_window", 0));
        }
        let history = match (check.spec.use_history, settings.max_history_tokens) {
            // The context's input budget bounds the history it assembles.
            _ if check.context.is_some() => Some(0),
            (false, _) => Some(0),
            (true, Some(h)) => Some(h),
            (true, None) => {
                issues.push(missing_history_budget(check.at.key("use_history"), Some(check.step_id)));
                None
            }
        };
        let output = output_limit(check.spec, model, check.step_id, &check.at).map_err(|i| issues.push(i)).ok();
        let templates: Vec<&str> = check.spec.parts().iter().map(|p| p.template.as_str()).collect();
        let fixed = match &check.context {
            Some(context) => Ok(context.input_tokens),
            None => fixed_prompt_tokens(check.system_prompt, &templates, counter),
        };
        let fixed = fixed
            .map_err(|e| {
                issues.push(ConfigIssue::new(
                    Code::PromptCountFailed,
                    check.at.key("prompt_key"),
                    format!("cannot count the prompt of {} step `{}`: {e}", check.kind(), check.step_id),
                ));
            })
            .ok();
        let tools = agent_tool_tokens(check, counter).map_err(|i| issues.push(i)).ok();
        let priming = counter.count_messages(&[]).unwrap_or(0);
        if let (Some(history), Some(output), Some(fixed), Some(tools)) = (history, output, fixed, tools) {
            terms.push(Terms {
                check,
                model,
                fixed,
                tools,
                priming,
                history,
                output,
                counting: counter.format().counting(),
                inputs: Vec::new(),
            });
        }
    }
    // The inputs' budgets: declared in the settings, or derived from the other declarations (a
    // reply is at most the largest output limit); a step assembling a context has none.
    let largest_output = terms.iter().map(|t| (t.output.tokens, t.check.step_id)).max_by_key(|(n, _)| *n);
    let declared = Declared {
        question: settings.max_question_tokens,
        variable: settings.max_variable_tokens,
        max_context_tokens: settings.max_context_tokens,
        largest_output,
    };
    for t in &mut terms {
        if t.check.context.is_none() {
            t.inputs = inputs::pending_inputs(t.check.spec, &declared);
        }
    }
    let unusable = model.context_window == 0
        || (settings.max_context_tokens == 0 && renders_context)
        || terms.iter().any(|t| t.model.context_window == 0);

    match settings.policy {
        LimitsPolicy::FailFast => {
            let mut default = None;
            if !unusable {
                issues.extend(terms.iter().filter_map(|t| violation(t, settings)));
                issues.extend(terms.iter().filter_map(|t| turn_budget_issue(t, settings, None)));
                let outputs = vec![None; terms.len()];
                match default_budget(&terms, settings, settings.max_context_tokens, &outputs) {
                    Ok(d) => default = d,
                    // A step over the window says so already; its room is not the question.
                    Err(found) if issues.is_empty() => issues.extend(found),
                    Err(_) => {}
                }
            }
            if !issues.is_empty() {
                return Err(issues);
            }
            let steps: Vec<StepBudget> =
                terms.iter().map(|t| budget(t, settings, settings.max_context_tokens, None, default)).collect();
            Ok(ContractReport {
                policy: LimitsPolicy::FailFast,
                context_window: model.context_window,
                max_context_tokens: settings.max_context_tokens,
                inputs: report_inputs(&steps),
                steps,
                clamps: Vec::new(),
                counting: counter.format().counting(),
            })
        }
        // Clamping around a missing value would be a silent default: errors first.
        LimitsPolicy::AutoClamp if !issues.is_empty() => Err(issues),
        LimitsPolicy::AutoClamp => auto_clamp(&terms, model, settings, counter.format().counting()),
    }
}

/// The budget every undeclared input takes, with the step that sets it: the least, over the
/// steps rendering one, of the room the window leaves them after every other term (with the
/// context budget `context` and the output limits in effect, `outputs[i]` or the configured one),
/// shared evenly among that step's undeclared inputs. `None` when no step renders one; the
/// `INPUT_BUDGET_NO_ROOM` issues of the steps that leave no room.
fn default_budget<'a>(
    terms: &[Terms<'_, 'a>],
    settings: &Settings,
    context: usize,
    outputs: &[Option<usize>],
) -> Result<Option<(usize, &'a str)>, Vec<ConfigIssue>> {
    let mut least: Option<(usize, &'a str)> = None;
    let mut issues = Vec::new();
    for (t, out) in terms.iter().zip(outputs) {
        let n = t.defaults();
        if n == 0 {
            continue;
        }
        let output = out.unwrap_or(t.output.tokens) as u128;
        let used =
            t.rest(settings.safety_margin_tokens) - t.output.tokens as u128 + output + t.context(context) as u128;
        let room = (t.model.context_window as u128).saturating_sub(used);
        let share = usize::try_from(room / n as u128).unwrap_or(usize::MAX);
        if share == 0 {
            issues.push(no_room(t, settings, context));
        } else if least.is_none_or(|(l, _)| share < l) {
            least = Some((share, t.check.step_id));
        }
    }
    if issues.is_empty() { Ok(least) } else { Err(issues) }
}

/// The issue of a step whose undeclared inputs the window leaves no room.
fn no_room(t: &Terms<'_, '_>, settings: &Settings, context: usize) -> ConfigIssue {
    let names: Vec<String> = t
        .inputs
        .iter()
        .filter_map(|p| match p {
            Pending::Default { source, .. } => Some(format!("`{source}`")),
            Pending::Known(_) => None,
        })
        .collect();
    let settings_keys: Vec<&str> = {
        let mut keys: Vec<&str> = t
            .inputs
            .iter()
            .filter_map(|p| match p {
                Pending::Default { setting, .. } => Some(*setting),
                Pending::Known(_) => None,
            })
            .collect();
        keys.dedup();
        keys
    };
    ConfigIssue::new(
        Code::InputBudgetNoRoom,
        t.check.at.clone(),
        format!(
            "{} step `{}` renders {} with no budget declared, and {} leaves it no room: {}",
            t.check.kind(),
            t.check.step_id,
            names.join(", "),
            t.window_named(),
            spell_out(t, settings, context),
        ),
    )
    .with_help(format!(
        "declare {} in `settings` (the longest value a run may bring) and lower the budgets above to make room for it",
        settings_keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" and ")
    ))
}

/// Every step's input budgets, once per source (the first step's, which all steps share: the
/// declared and derived budgets are the pipeline's, and the default is one for all).
fn report_inputs(steps: &[StepBudget]) -> Vec<InputBudget> {
    let mut out: Vec<InputBudget> = Vec::new();
    for b in steps.iter().flat_map(|s| &s.inputs) {
        // A second `context_blocks` is the context term again, not an input of its own.
        if b.source != "context_blocks" && !out.iter().any(|o| o.source == b.source) {
            out.push(b.clone());
        }
    }
    out
}

fn budget(
    t: &Terms<'_, '_>,
    settings: &Settings,
    context: usize,
    output: Option<usize>,
    default: Option<(usize, &str)>,
) -> StepBudget {
    let output_tokens = output.unwrap_or(t.output.tokens);
    let inputs = inputs::resolve(&t.inputs, default);
    let input_tokens = inputs.iter().fold(0usize, |sum, b| sum.saturating_add(b.tokens));
    let mut step = StepBudget {
        step_id: t.check.step_id.to_owned(),
        at: t.check.at.clone(),
        fixed_prompt_tokens: t.fixed,
        tool_schema_tokens: t.tools,
        max_model_requests: t
            .check
            .agent
            .map_or(1, |a| usize::try_from(a.max_tool_calls).unwrap_or(0).saturating_add(1)),
        turn_budget_tokens: t.check.agent.map(|a| turn_budget(t, a, settings, output_tokens)),
        history_tokens: t.history,
        context_tokens: t.context(context),
        output_tokens,
        requested_output_tokens: t.output.tokens,
        output_source: t.output.source,
        safety_margin_tokens: settings.safety_margin_tokens,
        context_window: t.model.context_window,
        model: t.check.model.map(|m| m.name.to_owned()),
        inputs,
        input_tokens,
        reply_priming_tokens: t.priming,
        worst_request_tokens: 0,
    };
    step.worst_request_tokens =
        super::worst_input_tokens(&step, t.check.agent.is_some()).saturating_add(step.output_tokens);
    step
}

/// The sum with every term named, e.g. `fixed prompt 41 (…) + max_history_tokens 0 (…) + … = 9000`.
fn spell_out(t: &Terms<'_, '_>, settings: &Settings, context: usize) -> String {
    let tools = if t.tools > 0 { format!("tool schemas {} + ", t.tools) } else { String::new() };
    if let Some(c) = &t.check.context {
        return format!(
            "context `{}` input_budget.max_tokens {} (system prompt, history, packs and user message as assembled) + \
             {tools}max_output_tokens {} (from {}) + budget_safety_margin_tokens {} = {}",
            c.name,
            c.input_tokens,
            t.output.tokens,
            t.output.source.describe(),
            settings.safety_margin_tokens,
            t.rest(settings.safety_margin_tokens),
        );
    }
    let history = if t.check.spec.use_history {
        format!("max_history_tokens {}", t.history)
    } else {
        "history 0 (no use_history)".to_owned()
    };
    let total = t.rest(settings.safety_margin_tokens) + context as u128;
    let inputs: String = t
        .inputs
        .iter()
        .map(|p| match p {
            Pending::Known(b) => format!(" + {} {} (from {})", b.label(), b.tokens, b.origin.describe()),
            // Its budget is what the sum leaves of the window: none, in a sum over it.
            Pending::Default { source, setting } => format!(
                " + {} 0 (`{setting}` not set: it gets the room the window leaves)",
                inputs::InputBudget::new(source.clone(), 0, inputs::BudgetOrigin::Derived { by: String::new() })
                    .label()
            ),
        })
        .collect();
    format!(
        "fixed prompt {} (system prompt `{}`, user_parts templates, chat overhead) + {tools}{history} + max_context_tokens \
         {context}{inputs} + max_output_tokens {} (from {}) + budget_safety_margin_tokens {} = {total}",
        t.fixed,
        t.check.spec.prompt_key,
        t.output.tokens,
        t.output.source.describe(),
        settings.safety_margin_tokens,
    )
}

/// The `fail_fast` issue for a step that does not fit, if it does not.
fn violation(t: &Terms<'_, '_>, settings: &Settings) -> Option<ConfigIssue> {
    let model = t.model;
    let ctx = t.context(settings.max_context_tokens);
    let total = t.rest(settings.safety_margin_tokens) + ctx as u128;
    let window = model.context_window as u128;
    if total <= window {
        return None;
    }
    let over = total - window;
    let id = t.check.step_id;
    // An output limit that alone fills the window is that value's mistake: say so under it,
    // rather than as an overflow of the whole step.
    let output_key = match t.output.source {
        OutputSource::StepMaxOutputTokens => Some("max_output_tokens"),
        OutputSource::StepMaxTokens => Some("max_tokens"),
        OutputSource::ModelMaxTokens => None,
    };
    if let Some(key) = output_key
        && t.output.tokens as u128 >= window
    {
        let room = window.saturating_sub(total - t.output.tokens as u128);
        return Some(
            ConfigIssue::new(
                Code::OutputExceedsWindow,
                t.check.at.key(key),
                format!(
                    "`{key}` of {} step `{id}` is {}, at least {} whole context window ({window})",
                    t.check.kind(),
                    t.output.tokens,
                    t.whose()
                ),
            )
            .with_help(format!(
                "the window leaves {room} for the output after fixed prompt {}, history {}, max_context_tokens {ctx} \
                 and budget_safety_margin_tokens {}; lower `{key}` to at most {room}{}",
                t.fixed,
                t.history,
                settings.safety_margin_tokens,
                if room == 0 { " after making room for it" } else { "" },
            )),
        );
    }
    // A fixed prompt that alone fills the window (with the margin) is the prompt's mistake,
    // most often a long system prompt: say so under the prompt, where a pipeline file shows the
    // file it was read from, rather than as an overflow of the step.
    if t.fixed as u128 + settings.safety_margin_tokens as u128 >= window {
        let key = t.check.spec.prompt_key.as_str();
        return Some(
            ConfigIssue::new(
                Code::BudgetContractViolated,
                FieldPath::root().key("prompts").key(key),
                format!(
                    "system prompt `{key}` is too long for {} step `{id}`: its fixed prompt is {} tokens (system \
                     prompt, user_parts templates, chat overhead) and with budget_safety_margin_tokens {} leaves \
                     nothing of {} context window ({window}); the step can need {total} (over by {over}){}",
                    t.check.kind(),
                    t.fixed,
                    settings.safety_margin_tokens,
                    t.whose(),
                    estimate_note(t.counting),
                ),
            )
            .with_help(format!(
                "shorten prompt `{key}` by at least {over} tokens, or use a model whose context window is at least {total}"
            )),
        );
    }
    let mut fixes = lowering_fixes(t, ctx, over);
    fixes.push(format!("use a model whose context window is at least {total}"));
    Some(
        ConfigIssue::new(
            Code::BudgetContractViolated,
            t.check.at.clone(),
            format!(
                "{} step `{id}` can need {total} tokens but {} context window is {} (over by {over}): {}{}",
                t.check.kind(),
                t.whose(),
                model.context_window,
                spell_out(t, settings, ctx),
                estimate_note(t.counting),
            ),
        )
        .with_help(format!("{}; or, in dev/test only, opt into `limits_policy: auto_clamp`", fixes.join("; or "))),
    )
}

/// The fixes that lower one term by the overflow `over`, each only when what it leaves is usable
/// (see `usable.rs`: the output floor, a context budget above the evidence budget, a history
/// budget above 0, a system prompt or a context's input budget not emptied).
fn lowering_fixes(t: &Terms<'_, '_>, ctx: usize, over: u128) -> Vec<String> {
    let id = t.check.step_id;
    let mut fixes = Vec::new();
    if let Some(to) = lowered(ctx, over, least_context(t.check.evidence_tokens)) {
        fixes.push(format!("lower `settings.max_context_tokens` from {ctx} to {to}"));
    }
    if let Some(to) = lowered(t.output.tokens, over, least_output()) {
        fixes.push(match t.output.source {
            OutputSource::StepMaxOutputTokens => {
                format!("lower `steps.{id}.max_output_tokens` from {} to {to}", t.output.tokens)
            }
            OutputSource::StepMaxTokens => format!("lower `steps.{id}.max_tokens` from {} to {to}", t.output.tokens),
            OutputSource::ModelMaxTokens => {
                format!(
                    "set `max_output_tokens: {to}` on step `{id}` (it falls back to the model's {})",
                    t.output.tokens
                )
            }
        });
    }
    // A declared input budget is the user's own number: lowering it is a fix like the others.
    let mut lowered_inputs: Vec<&str> = Vec::new();
    for p in &t.inputs {
        if let Pending::Known(b) = p
            && let inputs::BudgetOrigin::Declared { setting } = b.origin
            && !lowered_inputs.contains(&setting)
            && let Some(to) = lowered(b.tokens, over, 1)
        {
            lowered_inputs.push(setting);
            fixes.push(format!("lower `settings.{setting}` from {} to {to}", b.tokens));
        }
    }
    if t.check.spec.use_history
        && let Some(to) = lowered(t.history, over, 1)
    {
        fixes.push(format!("lower `settings.max_history_tokens` from {} to {to}", t.history));
    }
    match &t.check.context {
        Some(c) if (t.fixed as u128) > over => fixes.push(format!(
            "lower `input_budget.max_tokens` of context `{}` from {} to {}",
            c.name,
            t.fixed,
            t.fixed as u128 - over
        )),
        None if (t.fixed as u128) > over => {
            fixes.push(format!("shorten the system prompt `{}` by {over} tokens", t.check.spec.prompt_key));
        }
        _ => {}
    }
    fixes
}

/// What a message says after counts that are estimates, so no estimate reads as a count.
fn estimate_note(counting: Counting) -> String {
    match counting {
        Counting::Exact => String::new(),
        estimated => format!(" (prompt counts {estimated}: the model's tokenizer is not published)"),
    }
}

/// `auto_clamp`: lower `max_context_tokens` to what the worst step leaves (never below 1), then
/// lower the output of any step still over; a step that cannot fit even then is an error.
fn auto_clamp(
    terms: &[Terms<'_, '_>],
    model: &ModelConfig,
    settings: &Settings,
    counting: Counting,
) -> Result<ContractReport, Vec<ConfigIssue>> {
    let margin = settings.safety_margin_tokens;
    let configured = settings.max_context_tokens;
    let mut clamps = Vec::new();
    let mut issues = Vec::new();

    // A step that assembles a declared context does not use `max_context_tokens`.
    let worst = terms
        .iter()
        .filter(|t| t.check.context.is_none())
        .map(|t| (t, (t.model.context_window as u128).saturating_sub(t.rest(margin))))
        .min_by_key(|(_, room)| *room);
    let mut context = configured;
    if let Some((t, room)) = worst
        && room < configured as u128
    {
        // `room < configured`, so it fits in usize.
        context = usize::try_from(room).unwrap_or(configured).max(1);
        let floor = if room == 0 { "; kept at the floor of 1" } else { "" };
        clamps.push(Clamp {
            target: ClampTarget::MaxContextTokens,
            step_id: t.check.step_id.to_owned(),
            before: configured,
            after: context,
            reason: format!(
                "{} step `{}` leaves {room} of {} for context after fixed prompt {} + history {} + \
                 max_output_tokens {} + margin {margin}{floor}",
                t.check.kind(),
                t.check.step_id,
                t.window_named(),
                t.fixed,
                t.history,
                t.output.tokens
            ),
        });
    }

    let mut outputs = Vec::with_capacity(terms.len());
    for t in terms {
        let window = t.model.context_window as u128;
        let total = t.rest(margin) + t.context(context) as u128;
        if total <= window {
            outputs.push(None);
            continue;
        }
        let over = total - window;
        if (t.output.tokens as u128) > over {
            let after = usize::try_from(t.output.tokens as u128 - over).unwrap_or(1);
            clamps.push(Clamp {
                target: ClampTarget::MaxOutputTokens,
                step_id: t.check.step_id.to_owned(),
                before: t.output.tokens,
                after,
                reason: format!(
                    "with max_context_tokens at {context}, {} step `{}` is still {over} over {}: {}",
                    t.check.kind(),
                    t.check.step_id,
                    t.window_named(),
                    spell_out(t, settings, context)
                ),
            });
            outputs.push(Some(after));
        } else {
            // The output and, unless the step assembles a declared context, the context budget.
            let floor: u128 = if t.check.context.is_some() { 1 } else { 2 };
            let need = t.fixed as u128 + t.history as u128 + margin as u128 + floor;
            let (held, fix) = match &t.check.context {
                Some(c) => (
                    format!("context `{}` input_budget.max_tokens {}", c.name, t.fixed),
                    format!("lower `input_budget.max_tokens` of context `{}`", c.name),
                ),
                None => (
                    format!("fixed prompt {} + history {}", t.fixed, t.history),
                    format!(
                        "shorten the system prompt `{}`, lower `settings.max_history_tokens`",
                        t.check.spec.prompt_key
                    ),
                ),
            };
            issues.push(
                ConfigIssue::new(
                    Code::BudgetContractUnsatisfiable,
                    t.check.at.clone(),
                    format!(
                        "{} step `{}` cannot fit {} even with max_context_tokens and its output clamped to \
                         1 token each: {held} + margin {margin} + {floor} = {need}",
                        t.check.kind(),
                        t.check.step_id,
                        t.window_named(),
                    ),
                )
                .with_help(format!("{fix} or `budget_safety_margin_tokens`, or use a larger model")),
            );
            outputs.push(None);
        }
    }
    for (t, out) in terms.iter().zip(&outputs) {
        issues.extend(turn_budget_issue(t, settings, *out));
    }
    // The undeclared inputs take what the clamped budgets leave: a clamp fills the window, so a
    // step it touched leaves none (declare the budget, and the clamp makes room for it).
    let mut default = None;
    if issues.is_empty() {
        match default_budget(terms, settings, context, &outputs) {
            Ok(d) => default = d,
            Err(found) => issues.extend(found),
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    for c in &clamps {
        let setting = match c.target {
            ClampTarget::MaxContextTokens => "max_context_tokens",
            ClampTarget::MaxOutputTokens => "max_output_tokens",
        };
        tracing::warn!(
            target: "ctx::contract",
            setting,
            step = c.step_id.as_str(),
            before = c.before,
            after = c.after,
            reason = c.reason.as_str(),
            "auto_clamp lowered {setting} from {} to {}",
            c.before,
            c.after
        );
    }
    let steps: Vec<StepBudget> =
        terms.iter().zip(outputs).map(|(t, out)| budget(t, settings, context, out, default)).collect();
    Ok(ContractReport {
        policy: LimitsPolicy::AutoClamp,
        context_window: model.context_window,
        max_context_tokens: context,
        inputs: report_inputs(&steps),
        steps,
        clamps,
        counting,
    })
}

/// The exact cost of an agent step's tool schemas (0 for `call_model`). Schemas whose parameters
/// do not parse are left out: the step's own rules report them.
fn agent_tool_tokens(check: &CallModelCheck<'_>, counter: &TokenCounter) -> Result<usize, ConfigIssue> {
    let Some(agent) = check.agent else { return Ok(0) };
    counter.format().count_tools(counter, &agent.schemas()).map_err(|e| {
        ConfigIssue::new(
            Code::ToolCountFailed,
            check.at.key("tools"),
            format!("cannot count the tool schemas of agent step `{}`: {e}", check.step_id),
        )
        .with_help("use a chat format that renders tool schemas (the OpenAI format), or remove the tools")
    })
}

/// The most the transcript of an agent turn may hold with `output` as the output limit: the
/// window less the output, the margin, the tool schemas and the reply priming.
fn turn_room(t: &Terms<'_, '_>, settings: &Settings, output: usize) -> usize {
    t.model
        .context_window
        .saturating_sub(output)
        .saturating_sub(settings.safety_margin_tokens)
        .saturating_sub(t.tools)
        .saturating_sub(t.priming)
}

/// The turn budget in effect: the declared one, else [`turn_room`] (at least 1).
fn turn_budget(t: &Terms<'_, '_>, agent: &AgentSpec, settings: &Settings, output: usize) -> usize {
    let declared = agent.turn_budget_tokens.and_then(|v| usize::try_from(v).ok());
    declared.unwrap_or_else(|| turn_room(t, settings, output)).max(1)
}

/// The issue of an agent step whose declared turn budget leaves the output less than its limit.
fn turn_budget_issue(t: &Terms<'_, '_>, settings: &Settings, output: Option<usize>) -> Option<ConfigIssue> {
    let declared = t.check.agent?.turn_budget_tokens.and_then(|v| usize::try_from(v).ok())?;
    let output = output.unwrap_or(t.output.tokens);
    let room = turn_room(t, settings, output);
    (declared > room).then(|| {
        ConfigIssue::new(
            Code::TurnBudgetExceedsRoom,
            t.check.at.key("turn_budget_tokens"),
            format!(
                "`turn_budget_tokens` of agent step `{}` is {declared}, but the {}-token window leaves the turn {room} \
                 after max_output_tokens {output}, budget_safety_margin_tokens {}, tool schemas {} and reply priming {}",
                t.check.step_id, t.model.context_window, settings.safety_margin_tokens, t.tools, t.priming
            ),
        )
        .with_help(format!("lower `turn_budget_tokens` to at most {room}, or remove it to use exactly that"))
    })
}
