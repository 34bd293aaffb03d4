//! `validate_definition`: every rule of a whole pipeline, all problems at once, each with the
//! field path of the offending value. The `pipeline!` macro calls it at compile time and
//! `LoadedPipeline::load` (ctx-runtime) at load time, so a rule is written once.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::codes::Code;
use crate::config::missing_history_budget;
use crate::contract::invalid_output_limit;
use crate::validation::positive as positive_tokens;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{CallModelSpec, ModelSource, PipelineDef, SetValueSpec, SetVariablesSpec, StepDef, StepKind};
use super::graph::{StepGraph, step_path};
use super::resolve::{ModelInput, ResolveInput, resolve};
use super::suggest::help_for_unknown;
use super::validate_agent::agent_issues;
use super::values::{self, TargetKind, Transform, Val};

/// What `validate_definition` checks beyond the definition itself.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidateOptions {
    /// Count the prompts with the real tokenizer and check the budget contract of every
    /// `call_model` step, when the model is inline and every prompt it uses is a literal.
    pub check_tokens: bool,
    /// The `PIPELINE_LIMITS_POLICY` environment value, when the caller read it; it wins over
    /// `settings.limits_policy`.
    pub env_limits_policy: Option<String>,
    /// Where relative paths of model files (`model { tokenizer: … }`) start; the working
    /// directory when `None`. The `pipeline!` macro sets the crate's root.
    pub base_dir: Option<std::path::PathBuf>,
}

crate::setters!(ValidateOptions {
    check_tokens: bool,
    env_limits_policy: Option<String>,
    base_dir: Option<std::path::PathBuf>,
});

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions { check_tokens: true, env_limits_policy: None, base_dir: None }
    }
}

/// The placeholder a `user_parts` template holds exactly once.
pub const PLACEHOLDER: &str = "{}";

/// Every problem of `def`, in a stable order: graph rules, prompts, then each step's fields.
///
/// ```
/// use ctx::definition::{PipelineDef, ModelSource, ModelSpec, SettingsSpec, StepDef, StepKind,
///     SearchNodesSpec, ValidateOptions, validate_definition};
/// use ctx::codes::Code;
///
/// let def = PipelineDef::new("Demo").model(ModelSource::Inline(ModelSpec::default())).settings(SettingsSpec::default()).steps(vec![StepDef::new("search", StepKind::SearchNodes(SearchNodesSpec::new(0, "fetch")))]);
/// let issues = validate_definition(&def, &ValidateOptions::default().check_tokens(false));
/// let codes: Vec<_> = issues.iter().map(|i| (i.code, i.path.to_string())).collect();
/// assert!(codes.contains(&(Code::UnknownStepTarget, "steps[0].next".to_string())));
/// assert!(codes.contains(&(Code::InvalidTopK, "steps[0].top_k".to_string())));
/// ```
pub fn validate_definition(def: &PipelineDef, opts: &ValidateOptions) -> Vec<ConfigIssue> {
    validate_with_config(def, None, opts)
}

/// What does not stop a pipeline from compiling or loading but is likely a mistake, each with its
/// code and the path of the value: a variable read where some path from the first step has not
/// set it (`VARIABLE_MAYBE_UNSET`), an `on_over` no conversation can take
/// (`BUDGET_ON_OVER_NEVER_TAKEN`), a model reply replaced before anything reads it
/// (`DATAFLOW_RESPONSE_OVERWRITTEN`), a variable no step reads (`DATAFLOW_VARIABLE_UNREAD`) and a
/// prompt, named model, context or setting nothing uses (`DATAFLOW_*_UNUSED`). The loader logs
/// them and keeps them (`LoadedPipeline::warnings`), `ctx check` prints them, and `pipeline!`
/// shows them as warnings at the token.
pub fn definition_warnings(def: &PipelineDef) -> Vec<ConfigIssue> {
    let mut warnings = super::dataflow::variables_maybe_unset(def);
    warnings.extend(super::context_flow::on_over_never_taken(def));
    warnings.extend(super::produced::unconsumed_warnings(def));
    warnings.extend(super::unused::unused_declarations(def));
    warnings
}

/// [`validate_definition`] with the `config.json` the definition names already read, so that
/// the budget contract is checked against its model (and its `allow_auto_clamp`) too.
#[cfg_attr(not(feature = "yaml"), allow(dead_code))]
pub fn validate_with_config(
    def: &PipelineDef,
    config: Option<&crate::config::ConfigFile>,
    opts: &ValidateOptions,
) -> Vec<ConfigIssue> {
    validate_with_config_report(def, config, opts).0
}

/// [`validate_with_config`], with the budget contract's report when every check passed and the
/// contract could be checked (the model and every prompt known): its clamps are what
/// `auto_clamp` lowers when the pipeline is loaded with the same policy, which a check must show.
#[cfg_attr(not(feature = "yaml"), allow(dead_code))]
pub(crate) fn validate_with_config_report(
    def: &PipelineDef,
    config: Option<&crate::config::ConfigFile>,
    opts: &ValidateOptions,
) -> (Vec<ConfigIssue>, Option<crate::contract::ContractReport>) {
    let mut issues = structural_issues(def);
    let model = match (&def.model, config) {
        (ModelSource::Inline(spec), _) => ModelInput::Spec(spec),
        (ModelSource::ConfigFile(_), Some(file)) => ModelInput::Config(file.model.clone()),
        (ModelSource::ConfigFile(_), None) => ModelInput::Unknown,
    };
    let input = ResolveInput {
        model,
        allow_auto_clamp: config.is_some_and(|c| c.allow_auto_clamp),
        env_policy: opts.env_limits_policy.as_deref(),
        prompts: &BTreeMap::new(),
        check_tokens: opts.check_tokens,
        require_prompts: false,
        counter: None,
        base_dir: opts.base_dir.as_deref(),
        config_price: config.and_then(|c| c.price),
        config_models: config.map(|c| c.models.as_slice()),
        billed_token_ratio: None,
    };
    let resolved = resolve(def, input, &mut issues);
    let report = resolved.filter(|_| issues.is_empty()).map(|r| r.report);
    (issues, report)
}

/// The rules that need nothing but the definition: the graph, the references, the step fields.
pub fn structural_issues(def: &PipelineDef) -> Vec<ConfigIssue> {
    let mut issues = StepGraph::new(def).issues();
    prompt_issues(def, &mut issues);
    issues.extend(super::validate_context::contexts_issues(def));
    super::validate_models::model_name_issues(def, &mut issues);
    let variables = variables_set(def);
    let mut checked_settings = HashSet::new();
    for (i, step) in def.steps.iter().enumerate() {
        step_issues(def, i, step, &variables, &mut checked_settings, &mut issues);
    }
    // Evidence no request carries, hits no step reads: after the step rules, so a step's own
    // mistakes read first.
    issues.extend(super::produced::unconsumed_issues(def));
    issues
}

/// The names of the variables some `set_variables` rule sets (sources a step may read).
fn variables_set(def: &PipelineDef) -> BTreeSet<&str> {
    def.steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::SetVariables(spec) => Some(spec.rules.iter()),
            _ => None,
        })
        .flatten()
        .map(|r| r.set.as_str())
        .filter(|name| values::target_kind(name) == TargetKind::Variable)
        .collect()
}

fn prompt_issues(def: &PipelineDef, issues: &mut Vec<ConfigIssue>) {
    let mut seen = HashSet::new();
    for prompt in &def.prompts {
        if !seen.insert(prompt.key.as_str()) {
            issues.push(
                ConfigIssue::new(
                    Code::DuplicatePromptKey,
                    FieldPath::root().key("prompts").key(&prompt.key),
                    format!("prompt `{}` is declared twice", prompt.key),
                )
                .with_help("keep one declaration of each prompt key"),
            );
        }
    }
}

fn step_issues(
    def: &PipelineDef,
    i: usize,
    step: &StepDef,
    variables: &BTreeSet<&str>,
    checked_settings: &mut HashSet<String>,
    issues: &mut Vec<ConfigIssue>,
) {
    let path = step_path(i);
    let id = step.id.as_str();
    match &step.kind {
        StepKind::SearchNodes(s) => {
            if s.top_k <= 0 || usize::try_from(s.top_k).is_err() {
                issues.push(
                    ConfigIssue::new(
                        Code::InvalidTopK,
                        path.key("top_k"),
                        format!("`top_k` of step `{id}` is {}; it must be at least 1", s.top_k),
                    )
                    .with_help("set `top_k` to the number of hits to keep, e.g. `top_k: 20`"),
                );
            }
        }
        StepKind::ExpandDependencyTree(s) => {
            if s.max_depth < 0 || u32::try_from(s.max_depth).is_err() {
                issues.push(
                    ConfigIssue::new(
                        Code::InvalidMaxDepth,
                        path.key("max_depth"),
                        format!("`max_depth` of step `{id}` is {}; it must be between 0 and {}", s.max_depth, u32::MAX),
                    )
                    .with_help("set `max_depth` to how many dependency levels to follow, e.g. `max_depth: 2`"),
                );
            }
        }
        StepKind::FetchNodeTexts(s) => {
            positive(
                issues,
                Code::InvalidEvidenceTokens,
                path.key("evidence_tokens"),
                ("evidence_tokens", id, s.evidence_tokens),
                "the evidence budget, e.g. `evidence_tokens: 3_000`",
            );
        }
        StepKind::CallModel(s) => call_model_issues(def, &path, id, s, variables, issues),
        StepKind::Agent(s) => {
            call_model_issues(def, &path, id, &s.call, variables, issues);
            agent_issues(&path, id, s, issues);
        }
        StepKind::LoopGuard(s) => {
            let name = s.max_turn_loops_from_settings.as_str();
            match def.settings.extra.get(name) {
                None => {
                    let known: Vec<&str> = def.settings.extra.keys().map(String::as_str).collect();
                    issues.push(
                        ConfigIssue::new(
                            Code::UnknownSetting,
                            path.key("max_turn_loops_from_settings"),
                            format!("loop_guard `{id}` reads its limit from setting `{name}`, which is not declared"),
                        )
                        .with_help(format!(
                            "{}; declare it in `settings`, e.g. `{name}: 3`",
                            help_for_unknown(name, "setting", &known)
                        )),
                    );
                }
                // A negative value is the settings' own INVALID_SETTING; a loop count is a u32.
                Some(&limit) if limit > i64::from(u32::MAX) && checked_settings.insert(name.into()) => {
                    issues.push(
                        ConfigIssue::new(
                            Code::InvalidLoopLimit,
                            FieldPath::root().key("settings").key(name),
                            format!(
                                "setting `{name}` is {limit}, but loop_guard `{id}` uses it as a loop limit, which is \
                                 at most {}",
                                u32::MAX
                            ),
                        )
                        .with_help(format!("set `{name}` to how many retries to allow, e.g. `{name}: 3`")),
                    );
                }
                Some(&0) if checked_settings.insert(name.into()) => {
                    issues.push(
                        ConfigIssue::new(
                            Code::LoopLimitZero,
                            FieldPath::root().key("settings").key(name),
                            format!(
                                "setting `{name}` is 0, so loop_guard `{id}` can never allow a loop: its `on_allow` \
                                 branch (`{}`) never runs",
                                s.on_allow
                            ),
                        )
                        .with_help(format!(
                            "set `{name}` to how many loops to allow, e.g. `{name}: 2`, or route past the guard"
                        )),
                    );
                }
                Some(_) => {}
            }
        }
        StepKind::SetVariables(s) => set_variables_issues(&path, id, s, variables, issues),
        StepKind::Custom(s) => {
            let mut seen = HashSet::new();
            for (outcome, _) in &s.outcomes {
                if !seen.insert(outcome.as_str()) {
                    issues.push(
                        ConfigIssue::new(
                            Code::DuplicateOutcome,
                            path.key("outcomes").key(outcome),
                            format!("custom step `{id}` declares outcome `{outcome}` twice"),
                        )
                        .with_help("give each outcome one target"),
                    );
                }
            }
        }
        StepKind::ManageContextBudget(_) => {}
    }
}

/// A step field that must be a positive number of tokens.
fn positive(
    issues: &mut Vec<ConfigIssue>,
    code: Code,
    path: FieldPath,
    (field, id, value): (&str, &str, i64),
    example: &str,
) {
    if positive_tokens(value).is_none() {
        issues.push(
            ConfigIssue::new(
                code,
                path,
                format!("`{field}` of step `{id}` is {value}; it must be a positive number of tokens"),
            )
            .with_help(format!("set `{field}` to {example}")),
        );
    }
}

/// The sources a step may read, for help lines.
fn readable_names<'a>(variables: &BTreeSet<&'a str>) -> Vec<&'a str> {
    values::readable_fields().map(|f| -> &'a str { f }).chain(variables.iter().copied()).collect()
}

/// `None` when `source` can be read; else the issue.
fn source_issue(path: FieldPath, id: &str, source: &str, variables: &BTreeSet<&str>) -> Option<ConfigIssue> {
    match values::target_kind(source) {
        TargetKind::Variable if variables.contains(source) => None,
        TargetKind::Variable => Some(
            ConfigIssue::new(
                Code::UnknownSource,
                path,
                format!("step `{id}` reads `{source}`, which is neither a text field of the state nor a variable that a set_variables rule sets"),
            )
            .with_help(help_for_unknown(source, "source", &readable_names(variables))),
        ),
        TargetKind::TextList | TargetKind::Text | TargetKind::OptionalText | TargetKind::Computed => None,
        TargetKind::ClearOnly | TargetKind::ReadOnly => Some(
            ConfigIssue::new(
                Code::SourceNotText,
                path,
                format!("step `{id}` reads `{source}`, which is not a text field and cannot be rendered as text"),
            )
            .with_help(format!("read one of {}", readable_names(variables).iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "))),
        ),
    }
}

fn call_model_issues(
    def: &PipelineDef,
    path: &FieldPath,
    id: &str,
    s: &CallModelSpec,
    variables: &BTreeSet<&str>,
    issues: &mut Vec<ConfigIssue>,
) {
    if !def.prompts.iter().any(|p| p.key == s.prompt_key) {
        let keys: Vec<&str> = def.prompts.iter().map(|p| p.key.as_str()).collect();
        issues.push(
            ConfigIssue::new(
                Code::UnknownPrompt,
                path.key("prompt_key"),
                format!("step `{id}` uses prompt `{}`, which is not declared in `prompts`", s.prompt_key),
            )
            .with_help(help_for_unknown(&s.prompt_key, "prompt", &keys)),
        );
    }
    issues.extend(super::validate_context::context_step_issues(def, path, id, s, variables, source_issue));
    // History needs a history budget; the rule is reported here, under the step's `use_history`,
    // so that it names the step and shows even when the contract cannot be checked. A step that
    // assembles a context has no history of its own (its `use_history` is a conflict, above).
    if s.use_history && s.context.is_none() {
        match def.settings.max_history_tokens {
            None => issues.push(missing_history_budget(path.key("use_history"), Some(id))),
            Some(0) => issues.push(
                ConfigIssue::new(
                    Code::HistoryBudgetZero,
                    path.key("use_history"),
                    format!(
                        "call_model step `{id}` has `use_history: true` but `settings.max_history_tokens` is 0, so no \
                         history can ever be sent"
                    ),
                )
                .with_help("set `max_history_tokens` to about 10-15% of the window, or remove `use_history`"),
            ),
            Some(_) => {}
        }
    }
    // The contract's rule, applied to both keys (the contract only reads the one that wins).
    for (key, value) in [("max_output_tokens", s.max_output_tokens), ("max_tokens", s.max_tokens)] {
        if let Some(v) = value.filter(|&v| positive_tokens(v).is_none()) {
            issues.push(invalid_output_limit(id, path, key, v));
        }
    }
    super::validate_params::params_issues(path, id, &s.params, issues);
    for (j, part) in s.user_parts.iter().enumerate() {
        let part_path = path.key("user_parts").index(j);
        if let Some(issue) = source_issue(part_path.key("source"), id, &part.source, variables) {
            issues.push(issue);
        }
        let count = part.template.matches(PLACEHOLDER).count();
        if count != 1 {
            let what = if count == 0 { "has no `{}`".to_owned() } else { format!("has {count} `{{}}`") };
            issues.push(
                ConfigIssue::new(
                    Code::TemplatePlaceholder,
                    part_path.key("template"),
                    format!(
                        "the template of user part {j} (`{}`) of step `{id}` {what}; it must hold exactly one",
                        part.source
                    ),
                )
                .with_help(format!(
                    "write the template with one `{{}}` where `{}` goes, e.g. \"### Context:\\n{{}}\\n\\n\"",
                    part.source
                )),
            );
        }
    }
}

fn set_variables_issues(
    path: &FieldPath,
    id: &str,
    s: &SetVariablesSpec,
    variables: &BTreeSet<&str>,
    issues: &mut Vec<ConfigIssue>,
) {
    for (j, rule) in s.rules.iter().enumerate() {
        let rule_path = path.key("rules").index(j);
        let target = rule.set.as_str();
        let kind = values::target_kind(target);
        if kind == TargetKind::Variable && !values::is_variable_name(target) {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidVariableName,
                    rule_path.key("set"),
                    format!("rule {j} of step `{id}` sets `{target}`, which is not a valid variable name"),
                )
                .with_help("name variables with letters, digits and `_`, not starting with a digit"),
            );
            continue;
        }
        if matches!(kind, TargetKind::ReadOnly | TargetKind::Computed) {
            issues.push(
                ConfigIssue::new(Code::ReadOnlyTarget, rule_path.key("set"), values::read_only_reason(target))
                    .with_help("set a text field (`context_blocks`, `last_model_response`, …) or a variable"),
            );
            continue;
        }
        match &rule.value {
            SetValueSpec::Value(literal) => {
                if let Err(reason) = values::convert(target, Val::Json(literal.clone())) {
                    issues.push(
                        ConfigIssue::new(
                            Code::InvalidValue,
                            rule_path.key("value"),
                            format!("rule {j} of step `{id}`: {reason}"),
                        )
                        .with_help(value_help(kind)),
                    );
                }
            }
            SetValueSpec::From { from, transform } => {
                if values::target_kind(from) == TargetKind::Computed {
                    issues.push(
                        ConfigIssue::new(
                            Code::SourceNotText,
                            rule_path.key("from"),
                            format!(
                                "rule {j} of step `{id}` reads `{from}`, which exists only in a model request's \
                                 `user_parts` (computed from the spend caps when the request is rendered)"
                            ),
                        )
                        .with_help(format!("read `{from}` in a `user_parts` template, e.g. `Budget left: {{}} USD`")),
                    );
                    continue;
                }
                if let Some(issue) = source_issue(rule_path.key("from"), id, from, variables) {
                    issues.push(issue);
                    continue;
                }
                let Some(mut ty) = values::source_type(from) else { continue };
                if let Some(name) = transform {
                    let Some(t) = Transform::parse(name) else {
                        let names: Vec<&str> = Transform::names().collect();
                        issues.push(
                            ConfigIssue::new(
                                Code::UnknownTransform,
                                rule_path.key("transform"),
                                format!("rule {j} of step `{id}` uses transform `{name}`, which does not exist"),
                            )
                            .with_help(help_for_unknown(name, "transform", &names)),
                        );
                        continue;
                    };
                    match t.output_type(ty) {
                        Ok(out) => ty = out,
                        Err(reason) => {
                            issues.push(
                                ConfigIssue::new(
                                    Code::TransformType,
                                    rule_path.key("transform"),
                                    format!("rule {j} of step `{id}` reads `{from}`: {reason}"),
                                )
                                .with_help(format!(
                                    "pick a transform that takes what `{from}` holds: {}",
                                    Transform::names().collect::<Vec<_>>().join(", ")
                                )),
                            );
                            continue;
                        }
                    }
                }
                if let Err(reason) = values::check_assign(target, kind, ty) {
                    let at = if transform.is_some() { "transform" } else { "from" };
                    issues.push(
                        ConfigIssue::new(
                            Code::IncompatibleValue,
                            rule_path.key(at),
                            format!("rule {j} of step `{id}` sets `{target}` from `{from}`: {reason}"),
                        )
                        .with_help(value_help(kind)),
                    );
                }
            }
        }
    }
}

fn value_help(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::TextList => "context_blocks takes a list of texts or null (clears it)",
        TargetKind::Text => "this field takes a text; null sets it to \"\"",
        TargetKind::OptionalText => "this field takes a text or null",
        TargetKind::ClearOnly => "write `value: null` to clear it; its own step fills it",
        TargetKind::ReadOnly | TargetKind::Computed | TargetKind::Variable => {
            "a variable takes any value; null removes it"
        }
    }
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
