//! The checks of a pipeline that need more than its own structure: the `manage_context_budget`
//! configurations, the model, the settings, the evidence budgets and the budget contract. Each
//! rule lives in its own module (`budget`, `config`, `contract`); this file calls them in order,
//! puts their issues on index paths (`steps[i]…`) and keeps what they resolved.
//!
//! [`validate_definition`](super::validate_definition) calls it at compile time with what the
//! definition holds; `LoadedPipeline::load` (ctx-runtime) calls it again once
//! `config.json` and the prompts provided at load time are known. Same functions, same messages.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::budget::{
    FrameCost, ManageBudgetConfig, NodeFrame, check_evidence_budget, frame_languages, frame_tokens,
    validate_manage_budget_with,
};
use crate::codes::Code;
use crate::config::{ModelConfig, Settings};
use crate::contract::{
    ContractCache, ContractReport, CostBound, FingerprintBuilder, StepModel, call_model_checks_split, check_contract,
    cost_bound_billed, cost_issues, cost_issues_at_least, loop_limit,
};
use crate::tokens::TokenCounter;
use crate::validation::{ConfigIssue, FieldPath, PathSegment};

use super::definition::{PipelineDef, StepKind};
use super::graph::step_path;
pub use super::resolve_models::NamedModel;

/// Where the model's limits come from, as far as they are known.
#[derive(Debug)]
pub enum ModelInput<'a> {
    /// The `model { … }` block.
    Spec(&'a super::definition::ModelSpec),
    /// A `config.json`, already read and validated.
    Config(ModelConfig),
    /// A `config.json` that is only read at load time.
    Unknown,
}

/// What the checks need besides the definition.
#[derive(Debug)]
pub struct ResolveInput<'a> {
    pub model: ModelInput<'a>,
    /// `config.json`'s `allow_auto_clamp`.
    pub allow_auto_clamp: bool,
    /// The `PIPELINE_LIMITS_POLICY` value.
    pub env_policy: Option<&'a str>,
    /// Prompt texts provided at load time.
    pub prompts: &'a BTreeMap<String, String>,
    /// Whether to count prompts and check the contract.
    pub check_tokens: bool,
    /// Load time: every used prompt must have a text. At compile time a prompt without text is
    /// provided later, and the contract waits for it.
    pub require_prompts: bool,
    /// Counts with this counter instead of the one of the model's encoding, for the default
    /// model and every named model alike (one served model behind all of them).
    pub counter: Option<&'a TokenCounter>,
    /// Where relative paths of model files start (the crate when compiled).
    pub base_dir: Option<&'a Path>,
    /// `config.json`'s `price` for the default model, over the price table.
    pub config_price: Option<crate::config::Price>,
    /// `config.json`'s named models, once it is read.
    pub config_models: Option<&'a [crate::config::ConfigModel]>,
    /// The billed-to-counted token ratio the cost bound is priced at, overriding
    /// `settings.billed_token_ratio` (`LoadOptions::billed_token_ratio`).
    pub billed_token_ratio: Option<f64>,
}

/// What the checks resolved; complete only when every check passed.
#[derive(Debug)]
pub struct Resolved {
    pub model: ModelConfig,
    pub settings: Settings,
    pub report: ContractReport,
    /// The configuration of each `manage_context_budget` step, by step index.
    pub budgets: BTreeMap<usize, ManageBudgetConfig>,
    /// The counter of the model's own files (`model { tokenizer: … }`), when it has them.
    pub files_counter: Option<TokenCounter>,
    /// The most a run can cost, when every model a step uses has a price
    /// (`contract::cost_bound_billed`).
    pub cost: Option<CostBound>,
    /// The named models (`models { … }`), in declaration order.
    pub models: Vec<NamedModel>,
    /// The price of the default model, when it has one.
    pub price: Option<crate::config::Price>,
}

/// Runs every check, appends its issues to `issues` (skipping one whose path already has an
/// issue: the structural rules have said what is wrong there), and returns what was resolved.
pub fn resolve(def: &PipelineDef, input: ResolveInput<'_>, issues: &mut Vec<ConfigIssue>) -> Option<Resolved> {
    let mut found = Vec::new();
    let root = FieldPath::root();

    let mut budgets = BTreeMap::new();
    let mut budgets_ok = true;
    for (i, step) in def.steps.iter().enumerate() {
        if let StepKind::ManageContextBudget(spec) = &step.kind {
            match validate_manage_budget_with(spec, &step_path(i), &def.settings.compactors) {
                Ok(cfg) => {
                    budgets.insert(i, cfg);
                }
                Err(e) => {
                    budgets_ok = false;
                    found.extend(e);
                }
            }
        }
    }

    found.extend(settings_issues(def));

    let mut named = super::resolve_models::resolve_named(def, input.base_dir, input.config_models, &mut found);
    // A counter given to the loader (a locally served model's own tokenizer) counts every
    // model's requests: the same server answers for each name, so each is counted as it counts.
    if let Some(counter) = input.counter {
        for m in &mut named {
            m.counter = counter.clone();
        }
    }
    let mut files_counter = None;
    let model = match input.model {
        // Without a default model, what is counted outside a model step (context and evidence
        // budgets) is counted with the first named model; every model step names its own.
        _ if !def.has_default_model() => named.first().map(|m| {
            files_counter = Some(m.counter.clone());
            m.config.clone()
        }),
        ModelInput::Spec(spec) if spec.tokenizer.is_some() => {
            match super::model_files::complete_spec(spec, input.base_dir, &root.key("model")) {
                Ok((completed, counter)) => {
                    files_counter = Some(counter);
                    ModelConfig::from_spec(&completed, &root.key("model")).map_err(|e| found.extend(e)).ok()
                }
                Err(issues) => {
                    found.extend(issues);
                    None
                }
            }
        }
        ModelInput::Spec(spec) => ModelConfig::from_spec(spec, &root.key("model")).map_err(|e| found.extend(e)).ok(),
        ModelInput::Config(model) => Some(model),
        ModelInput::Unknown => None,
    };
    let settings = Settings::for_pipeline(
        &def.settings,
        // A step with `use_history` but no history budget is reported under that step (by the
        // structural rules), not here under the settings.
        (false, super::evidence_flow::pipeline_needs_context_budget(def)),
        &root.key("settings"),
        input.allow_auto_clamp,
        input.env_policy,
    )
    .map_err(|e| found.extend(e))
    .ok();

    // Prices: a model's `price` block, and `max_cost_per_run`'s need for a price.
    let model_name = model.as_ref().and_then(|m| m.model.as_deref());
    let price_found = crate::config::price_issues(def, model_name);
    // `config.json`'s `price` prices the default model: it misses no price.
    found.extend(price_found.into_iter().filter(|i| !(input.config_price.is_some() && i.code == Code::MissingPrice)));
    found.extend(named_price_issues(def, &named));

    let mut report = None;
    // The report of the steps checked so far, when others wait (see below): what the cost of a
    // run is at least.
    let mut partial = None;
    if input.check_tokens
        && let (Some(model), Some(settings)) = (&model, &settings)
    {
        // Every step whose prompt has text gets its contract checked, whatever else is wrong;
        // a step whose prompt has none is an issue once the prompts are required (at load), and
        // waits for its text before then.
        let (checks, missing) = call_model_checks_split(def, input.prompts);
        // A step that names a model is checked against it; one whose model did not resolve (its
        // issue is reported) waits for it to be fixed.
        let mut complete = missing.is_empty();
        let checks: Vec<_> = checks
            .into_iter()
            .filter_map(|check| match check.spec.model.as_deref() {
                None => Some(check),
                Some(name) => match named.iter().find(|m| m.name == name) {
                    Some(m) => Some(check.with_model(StepModel::new(&m.name, &m.config, &m.counter))),
                    None => {
                        complete = false;
                        None
                    }
                },
            })
            .collect();
        if input.require_prompts {
            found.extend(missing);
        }
        if complete || !input.require_prompts {
            let counter = input.counter.or(files_counter.as_ref()).cloned().unwrap_or_else(|| model.counter());
            let check = || check_contract(model, settings, &checks, &counter);
            // The contract is recomputed only when one of its inputs changed: the definition
            // (prompt files and `extends` already read into it), the prompts provided at load,
            // the model, the settings and the counter. Checking a file and then loading it for
            // running counts its prompts once.
            let fingerprint = (|| {
                let mut b = FingerprintBuilder::new().pipeline(def)?;
                for (key, text) in input.prompts {
                    b = b.prompt(key, text);
                }
                b = b.model(model).settings(settings).counter(&counter);
                // The named models' limits and counters (a `config.json`'s are not in `def`).
                for m in &named {
                    b = b.option("model", &m.name).model(&m.config).counter(&m.counter);
                }
                Ok::<_, crate::contract::ContractError>(b.finish())
            })();
            let outcome = match fingerprint {
                Ok(fingerprint) => ContractCache::shared().get_or_check(fingerprint, check),
                Err(_) => Arc::new(check()),
            };
            match outcome.as_ref() {
                // A report that leaves steps out is no report of the pipeline.
                Ok(r) if complete => report = Some(r.clone()),
                Ok(r) => partial = Some(r.clone()),
                Err(e) => found.extend(e.iter().cloned()),
            }
        }
    }

    // The worst-case cost of a run, held to `max_cost_per_run`: the graph's heaviest run, each
    // request as the contract bounds it, at the model's price (none: the price rules said so).
    let price = match input.config_price {
        Some(price) => Some(price),
        None if def.has_default_model() => crate::config::resolved_price(def, model_name),
        None => None,
    };
    let step_price = |i: usize| match def.steps[i].kind.model_request().and_then(|c| c.model.as_deref()) {
        Some(name) => named.iter().find(|m| m.name == name).and_then(|m| m.price),
        None => price,
    };
    // Priced at what the provider is assumed to bill per counted token: the caller's override,
    // else the settings' (an invalid one is reported by the price rules).
    let ratio = input.billed_token_ratio.or(def.settings.billed_token_ratio).unwrap_or(1.0);
    let cost = match (&report, &settings) {
        (Some(report), Some(settings)) => {
            cost_bound_billed(def, report, step_price, |i| loop_limit(def, settings, i), ratio)
        }
        _ => None,
    };
    found.extend(cost_issues(def, cost.as_ref()));
    // Every mistake at once: while a step waits for its prompt's text (a misspelled prompt key)
    // or its model, the steps already checked bound the cost from below (a step left out costs
    // nothing there, and the heaviest run only grows with what a visit costs), so a cap that
    // bound passes is passed whatever the others cost.
    if let (None, Some(partial), Some(settings)) = (&report, &partial, &settings) {
        let lower = cost_bound_billed(def, partial, step_price, |i| loop_limit(def, settings, i), ratio);
        let waiting: Vec<&str> = def
            .steps
            .iter()
            .filter(|s| s.kind.model_request().is_some() && partial.step(&s.id).is_none())
            .map(|s| s.id.as_str())
            .collect();
        found.extend(cost_issues_at_least(def, lower.as_ref(), &waiting));
    }

    // The evidence budget must fit the global budget in effect (clamped by auto_clamp, if so).
    let max_context = match (&report, def.settings.max_context_tokens) {
        (Some(r), _) => i64::try_from(r.max_context_tokens).ok(),
        (None, written) => written,
    };
    // The frames of the nodes count too: their own text is known (the spec's header or the
    // pipeline's `node_frame`), and so is the most nodes a fetch hands on (the `top_k` of the
    // search feeding it), so they are counted with the model's tokenizer whenever it is known.
    if let Some(max_context) = max_context {
        let counter = match (&model, input.check_tokens) {
            (Some(model), true) => {
                Some(input.counter.or(files_counter.as_ref()).cloned().unwrap_or_else(|| model.counter()))
            }
            _ => None,
        };
        let frame = def.settings.node_frame.as_deref().map(NodeFrame::parse);
        let languages = frame_languages(&def.settings.compactors);
        let graph = super::graph::StepGraph::new(def);
        for (i, step) in def.steps.iter().enumerate() {
            if let StepKind::FetchNodeTexts(spec) = &step.kind {
                let nodes = feeding_top_k(def, &graph, i)
                    .and_then(|k| usize::try_from(k.min(spec.evidence_tokens)).ok())
                    // Above `MAX_FRAMED_NODES`, `frame_tokens` counts that many frames: fewer
                    // tokens than the batch's frames take, so what it refuses is still refused.
                    .filter(|&k| k > 0);
                let frames = match (&counter, nodes, &frame) {
                    // An invalid frame is its own issue (settings_issues).
                    (_, _, Some(Err(_))) | (None, _, _) | (_, None, _) => None,
                    (Some(counter), Some(nodes), frame) => {
                        let frame = frame.clone().and_then(Result::ok).unwrap_or_default();
                        frame_tokens(&frame, nodes, &languages, counter).ok().map(|t| FrameCost::new(nodes, t))
                    }
                };
                found.extend(check_evidence_budget(spec.evidence_tokens, frames, &step_path(i), max_context));
            }
        }
    }

    let ids = first_indices(def);
    for issue in found {
        let issue = on_index_path(issue, &ids);
        if !issues.iter().any(|known| known.path == issue.path) {
            issues.push(issue);
        }
    }
    match (model, settings, report) {
        (Some(model), Some(settings), Some(report)) if budgets_ok => {
            Some(Resolved { model, settings, report, budgets, files_counter, cost, models: named, price })
        }
        _ => None,
    }
}

/// `max_cost_per_run` needs the price of every named model a step uses: `MISSING_PRICE` under
/// the model's name when it has none (no `price` block, and a name the price table lacks).
fn named_price_issues(def: &PipelineDef, named: &[NamedModel]) -> Vec<ConfigIssue> {
    if def.settings.max_cost_per_run.is_none() {
        return Vec::new();
    }
    let used =
        |name: &str| def.steps.iter().any(|s| s.kind.model_request().and_then(|c| c.model.as_deref()) == Some(name));
    named
        .iter()
        .filter(|m| m.price.is_none() && used(&m.name))
        .map(|m| {
            let why = match &m.config.model {
                Some(model) => {
                    format!("`{model}` has no price in ctx's price table ({})", crate::config::PRICE_TABLE_DATE)
                }
                None => "it has no `model` name to look its price up by".to_owned(),
            };
            ConfigIssue::new(
                Code::MissingPrice,
                FieldPath::root().key("models").key(&m.name),
                format!("`max_cost_per_run` needs the price of model `{}`, and {why}", m.name),
            )
            .with_help(format!(
                "give model `{}` its price: `price: {{ input: 0.15, cached_input: 0.075, output: 0.60 }}` (US dollars \
                 per million tokens)",
                m.name
            ))
        })
        .collect()
}

/// The largest `top_k` of the `search_nodes` steps whose hits can reach the fetch step at
/// `fetch`: a search from which a path leads to it through no other search (which would replace
/// the hits). `None` when no search feeds it.
fn feeding_top_k(def: &PipelineDef, graph: &super::graph::StepGraph<'_>, fetch: usize) -> Option<i64> {
    let successors = |u: usize| {
        graph.edges(u).iter().filter_map(|e| match e.resolved {
            super::graph::Resolved::Known(super::graph::Target::Step(v)) => Some(v),
            _ => None,
        })
    };
    let mut best = None;
    for (s, step) in def.steps.iter().enumerate() {
        let StepKind::SearchNodes(search) = &step.kind else { continue };
        let mut seen = vec![false; def.steps.len()];
        let mut stack: Vec<usize> = successors(s).collect();
        while let Some(u) = stack.pop() {
            if u == fetch {
                best = Some(best.map_or(search.top_k, |b: i64| b.max(search.top_k)));
                break;
            }
            if std::mem::replace(&mut seen[u], true) || matches!(def.steps[u].kind, StepKind::SearchNodes(_)) {
                continue;
            }
            stack.extend(successors(u));
        }
    }
    best
}

fn first_indices(def: &PipelineDef) -> HashMap<&str, usize> {
    let mut ids = HashMap::new();
    for (i, s) in def.steps.iter().enumerate() {
        ids.entry(s.id.as_str()).or_insert(i);
    }
    ids
}

/// `steps.<id>…` → `steps[i]…`: the contract names steps by id; the pipeline's paths use indices
/// so that duplicate ids stay unambiguous. Other paths are kept.
fn on_index_path(mut issue: ConfigIssue, ids: &HashMap<&str, usize>) -> ConfigIssue {
    if let [PathSegment::Key(steps), PathSegment::Key(id), ..] = issue.path.0.as_slice()
        && steps == "steps"
        && let Some(&i) = ids.get(id.as_str())
    {
        issue.path.0[1] = PathSegment::Index(i);
    }
    issue
}

/// The typed settings this module owns: `compactors` (names, not built in, each once) and
/// `node_frame` (a valid template).
fn settings_issues(def: &PipelineDef) -> Vec<ConfigIssue> {
    let at = FieldPath::root().key("settings");
    let mut found = Vec::new();
    for (i, name) in def.settings.compactors.iter().enumerate() {
        let path = at.key("compactors").index(i);
        // One registry holds every compactor, so a user compactor cannot take any built-in
        // name, even one (`truncate`, `code`) that is not a language a rule names.
        if crate::engine::BUILTIN_COMPACTORS.contains(&name.as_str()) {
            let help = if crate::lang::BUILTIN_LANGUAGES.contains(&name.as_str()) {
                format!("remove `{name}` from `compactors`: rules can name it as it is")
            } else {
                format!("`{name}` is not a language a rule can name; give your compactor another name")
            };
            found.push(
                ConfigIssue::new(
                    Code::CompactorBuiltin,
                    path,
                    format!("`{name}` is a built-in compactor; `compactors` declares user compactors only"),
                )
                .with_help(help),
            );
        } else if !crate::lang::is_language_name(name) {
            found.push(
                ConfigIssue::new(Code::CompactorBadName, path, format!("compactor language {name:?} is not a name"))
                    .with_help("use letters, digits and `_`, starting with a letter, e.g. `yaml`"),
            );
        } else if def.settings.compactors[..i].contains(name) {
            found.push(
                ConfigIssue::new(
                    Code::CompactorDuplicate,
                    path,
                    format!("compactor language `{name}` is declared twice"),
                )
                .with_help("remove one of the two"),
            );
        }
    }
    if let Some(template) = &def.settings.node_frame
        && let Err(e) = NodeFrame::parse(template)
    {
        found.push(ConfigIssue::new(Code::NodeFrameInvalid, at.key("node_frame"), e.to_string()).with_help(
            "placeholders are `{id}`, `{path}`, `{language}`, `{compact}` and `{text}` (exactly once); write `{{` \
                 and `}}` for literal braces, e.g. \"<doc id=\\\"{id}\\\">\\n{text}\\n</doc>\"",
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_paths_move_to_indices() {
        let def = crate::pipeline::testing::compaction_loop();
        let ids = first_indices(&def);
        let issue = ConfigIssue::new(Code::InvalidValue, FieldPath::parse("steps.summarize.max_output_tokens"), "m");
        assert_eq!(on_index_path(issue, &ids).path.to_string(), "steps[4].max_output_tokens");
        let issue = ConfigIssue::new(Code::InvalidValue, FieldPath::parse("settings.max_context_tokens"), "m");
        assert_eq!(on_index_path(issue, &ids).path.to_string(), "settings.max_context_tokens");
        let issue = ConfigIssue::new(Code::InvalidValue, FieldPath::parse("steps[2].on_ok"), "m");
        assert_eq!(on_index_path(issue, &ids).path.to_string(), "steps[2].on_ok");
    }

    #[test]
    fn compactors_and_the_node_frame_are_checked() {
        let mut def = crate::pipeline::testing::compaction_loop();
        def.settings.compactors = vec!["sql".into(), "9x".into(), "yaml".into(), "yaml".into(), "truncate".into()];
        def.settings.node_frame = Some("{id} without the text".into());
        let issues = settings_issues(&def);
        let found: Vec<(&str, String)> = issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect();
        // `truncate` is no language, but the one registry holds it: the help says so.
        assert!(issues[3].help.as_deref().is_some_and(|h| h.contains("not a language")), "{:?}", issues[3]);
        assert_eq!(
            found,
            [
                ("COMPACTOR_BUILTIN", "settings.compactors[0]".to_owned()),
                ("COMPACTOR_BAD_NAME", "settings.compactors[1]".to_owned()),
                ("COMPACTOR_DUPLICATE", "settings.compactors[3]".to_owned()),
                ("COMPACTOR_BUILTIN", "settings.compactors[4]".to_owned()),
                ("NODE_FRAME_INVALID", "settings.node_frame".to_owned()),
            ]
        );
    }
}
