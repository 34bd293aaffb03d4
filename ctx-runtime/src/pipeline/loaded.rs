//! [`LoadedPipeline`]: a validated definition with everything a run needs resolved — prompt
//! texts, the model's limits, the settings, the contract report, each `manage_context_budget`
//! configuration, the transitions as step indices and the proven bound on a run's length.

use std::collections::BTreeMap;

use crate::budget::{BudgetOptions, ManageBudgetConfig, NodeFrame};
use crate::codes::Code;
use crate::config::{ConfigFile, LimitsPolicy, ModelConfig, Settings};
use crate::contract::ContractReport;
use crate::error::CtxError;
use crate::tokens::TokenCounter;
use crate::validation::{ConfigIssue, ConfigIssues, FieldPath};

use super::Target;
use super::Transition;
use super::definition::{END, ModelSource, PipelineDef, StepKind};
use super::error::PipelineError;
use super::load::{LoadOptions, PromptSource};
use ctx_spec::pipeline::graph::StepGraph;
use ctx_spec::pipeline::resolve::{ModelInput, NamedModel, ResolveInput, resolve};
use ctx_spec::pipeline::suggest::help_for_unknown;
use ctx_spec::pipeline::validate::structural_issues;

/// The model a step uses ([`LoadedPipeline::step_model`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct StepModelRef<'p> {
    /// The step's named model (`model: NAME`), `None` for the default model.
    pub name: Option<&'p str>,
    /// Its window, output limit and encoding.
    pub config: &'p ModelConfig,
    /// What its requests are counted with.
    pub counter: &'p TokenCounter,
    /// Its price, when it has one.
    pub price: Option<crate::config::Price>,
}

/// A pipeline ready to run.
#[derive(Debug, Clone)]
pub struct LoadedPipeline {
    def: PipelineDef,
    /// Every prompt's text: the definition's, then those provided at load time.
    prompts: BTreeMap<String, String>,
    transitions: Vec<Vec<(String, Target)>>,
    model: ModelConfig,
    /// The settings in effect (`max_context_tokens` as the contract left it).
    settings: Settings,
    report: ContractReport,
    counter: TokenCounter,
    budgets: BTreeMap<usize, ManageBudgetConfig>,
    budget_options: BudgetOptions,
    step_bound: u64,
    model_request_bound: u64,
    /// The most a run can cost, when every model a step uses has a price.
    cost_bound: Option<ctx_spec::contract::CostBound>,
    /// The named models (`models { … }`), in declaration order.
    models: Vec<NamedModel>,
    /// The default model's price: `config.json`'s or its `price` block, else the price table's.
    price: Option<crate::config::Price>,
    /// The spend caps of every run and conversation.
    spend_caps: super::SpendCaps,
    /// The billed-to-counted token ratio the spend caps assume before usage shows one (>= 1).
    billed_token_ratio: f64,
    /// What does not stop the pipeline from loading but is likely a mistake.
    warnings: Vec<ConfigIssue>,
    /// The assembler of the pipeline's `contexts`, when it declares any.
    assembler: Option<std::sync::Arc<crate::engine::ContextAssembler>>,
    /// The model steps that append the fetched texts waiting in `node_texts` before they render
    /// their request (`steps_taking_fetched_texts`), by id.
    taking_fetched_texts: std::collections::BTreeSet<String>,
}

impl LoadedPipeline {
    /// Loads a pipeline file's definition for running ([`LoadedPipeline::load`]), relative paths
    /// starting at the pipeline file's directory unless `opts` sets a base directory. Every
    /// problem is reported at its location in the file.
    #[cfg(feature = "yaml")]
    #[cfg_attr(docsrs, doc(cfg(feature = "yaml")))]
    pub fn load_file(
        file: &crate::pipeline::yaml::LoadedFile,
        opts: LoadOptions,
    ) -> Result<LoadedPipeline, crate::pipeline::yaml::PipelineFileError> {
        use crate::codes::ErrorCode as _;
        use crate::pipeline::yaml::{Location, PipelineFileError, YamlIssue};
        let path = file.path();
        let opts = match opts.base_dir {
            Some(_) => opts,
            None => opts.base_dir(path.parent().map(std::path::Path::to_owned).unwrap_or_default()),
        };
        LoadedPipeline::load(file.definition().clone(), opts).map_err(|e| {
            let issues = match &e {
                CtxError::Config(c) => c.issues.iter().map(|i| file.locate(i)).collect(),
                other => {
                    let at = file.locations().nearest(&FieldPath::root().key("model").key("config"));
                    let at = at.cloned().unwrap_or_else(|| Location::whole_file(path));
                    vec![YamlIssue::new(&at, other.code(), other.to_string())]
                }
            };
            PipelineFileError::new(path, issues)
        })
    }

    /// Loads `def`: reads its `config.json` when the model comes from one (relative to
    /// [`LoadOptions::base_dir`]), adds the prompts given in `opts`, and runs every check of
    /// [`validate_definition`](super::validate_definition) plus the budget contract with the
    /// real tokenizer. Every problem is reported at once as [`CtxError::Config`]; a
    /// `config.json` that cannot be used is [`CtxError::ModelConfig`], naming the file and key.
    ///
    /// Under `auto_clamp` the contract may lower `max_context_tokens` and step output limits in
    /// memory; the loaded pipeline runs with the lowered values ([`Self::contract_report`] lists
    /// every clamp).
    pub fn load(def: PipelineDef, opts: LoadOptions) -> Result<LoadedPipeline, CtxError> {
        Self::load_counted(def, opts, None)
    }

    /// [`Self::load`] for a model that is not counted with an OpenAI encoding: every count (the
    /// contract at load time, then every step) uses `counter` — for a locally served model, the
    /// one `LlamaCppServer::default_counter`
    /// builds from the server's own tokenizer and chat template. The model's `encoding` is then
    /// not used for counting, nor are those of the named models (`models { … }`): `counter`
    /// counts the requests of every step, whichever model it names.
    pub fn load_with_counter(
        def: PipelineDef,
        opts: LoadOptions,
        counter: TokenCounter,
    ) -> Result<LoadedPipeline, CtxError> {
        Self::load_counted(def, opts, Some(counter))
    }

    fn load_counted(
        mut def: PipelineDef,
        opts: LoadOptions,
        counter: Option<TokenCounter>,
    ) -> Result<LoadedPipeline, CtxError> {
        // The tools MCP servers listed join their steps first, so every rule below checks them;
        // before that, a `config.json` places the servers (as `McpTools::connect` did).
        let mut listing_issues = Vec::new();
        if let ModelSource::ConfigFile(path) = &def.model
            && let Ok(file) = ConfigFile::load(opts.resolve(path.as_ref()))
            && !file.mcp_servers.is_empty()
        {
            listing_issues.extend(crate::config::apply_config_mcp_servers(&mut def, &file.mcp_servers));
        }
        let added = super::mcp_listing::add_listed(&mut def, &opts.listed_tools, &mut listing_issues);
        let mut issues = structural_issues(&def);
        issues.extend(listing_issues);
        issues.extend(unregistered_compactors(&def, &opts));
        let provided = provided_prompts(&def, &opts, &mut issues)?;
        let (model, allow_auto_clamp, config_price, config_models) = match &def.model {
            ModelSource::Inline(spec) => (ModelInput::Spec(spec), false, None, None),
            ModelSource::ConfigFile(path) => {
                let file = ConfigFile::load(opts.resolve(path.as_ref()))?;
                (ModelInput::Config(file.model), file.allow_auto_clamp, file.price, Some(file.models))
            }
        };
        // What the default model counts with, to name the MCP tools that cost most when they
        // no longer fit (a step on a named model is named without counts).
        let listing_counter = match (&counter, &model) {
            (Some(c), _) => Some(c.clone()),
            (None, ModelInput::Config(m)) => Some(m.counter()),
            (None, ModelInput::Spec(spec)) if spec.tokenizer.is_none() => {
                ModelConfig::from_spec(spec, &FieldPath::root()).ok().map(|m| m.counter())
            }
            _ => None,
        };
        let input = ResolveInput {
            model,
            allow_auto_clamp,
            env_policy: opts.env_limits_policy.as_deref(),
            prompts: &provided,
            check_tokens: true,
            require_prompts: true,
            counter: counter.as_ref(),
            base_dir: opts.base_dir.as_deref(),
            config_price,
            config_models: config_models.as_deref(),
            billed_token_ratio: opts.billed_token_ratio.map(f64::from_bits),
        };
        let resolved = resolve(&def, input, &mut issues);
        let model_name = resolved.as_ref().and_then(|r| r.model.model.clone());
        // A spend cap needs a price for every model a step uses: then the cost bound exists.
        let priced = match &resolved {
            Some(r) => r.cost.is_some(),
            None => config_price.is_some() || crate::config::resolved_price(&def, model_name.as_deref()).is_some(),
        };
        let spend_caps = spend_caps(&def, &opts, priced, &mut issues);
        let billed_token_ratio = billed_token_ratio(&def, &opts, &mut issues);
        name_prompt_files(&mut issues, &opts);
        let issues = added.rewrite(&def, issues, listing_counter.as_ref());
        let source = format!("pipeline `{}`", def.name);
        ConfigIssues::check(source.clone(), issues)?;
        // No issue means every check ran and passed, so everything was resolved.
        let Some(resolved) = resolved else {
            return Err(ConfigIssues::new(
                source,
                vec![ConfigIssue::new(
                    Code::PipelineUnresolved,
                    FieldPath::root(),
                    "the pipeline could not be resolved",
                )],
            )
            .into());
        };
        if resolved.report.policy == LimitsPolicy::AutoClamp {
            for clamp in &resolved.report.clamps {
                tracing::warn!(target: "ctx::pipeline", pipeline = %def.name, step = %clamp.step_id, before = clamp.before, after = clamp.after, "{}", clamp.reason);
            }
        }
        let warnings = ctx_spec::pipeline::definition_warnings(&def);
        for w in &warnings {
            tracing::warn!(target: "ctx::pipeline", pipeline = %def.name, code = %w.code, at = %w.path, "{}", w.message);
        }

        let graph = StepGraph::new(&def);
        let transitions = (0..def.steps.len())
            .map(|i| {
                graph
                    .edges(i)
                    .iter()
                    .map(|e| {
                        let target = match graph.index_of(e.target) {
                            _ if e.target == END => Target::End,
                            Some(j) => Target::Step(j),
                            // Validated: every target is a step or `end`.
                            None => Target::End,
                        };
                        (e.key.to_owned(), target)
                    })
                    .collect()
            })
            .collect();
        let settings = resolved.report.effective_settings(&resolved.settings);
        let (step_bound, model_request_bound) = run_bounds(&def, &graph, &settings, &resolved.report);
        let mut prompts: BTreeMap<String, String> =
            def.prompts.iter().filter_map(|p| Some((p.key.clone(), p.text.clone()?))).collect();
        prompts.extend(provided);
        let counter = counter.or(resolved.files_counter).unwrap_or_else(|| resolved.model.counter());
        // Validated by `resolve`: a template that does not parse is an issue reported above.
        let frame = def.settings.node_frame.as_deref().and_then(|t| NodeFrame::parse(t).ok()).unwrap_or_default();
        let assembler = assembler(&def, &counter, &opts)?;
        let budget_options = BudgetOptions { compactors: opts.compactors.clone(), frame };
        let taking_fetched_texts = ctx_spec::pipeline::steps_taking_fetched_texts(&def)
            .into_iter()
            .zip(&def.steps)
            .filter(|(takes, _)| *takes)
            .map(|(_, step)| step.id.clone())
            .collect();
        Ok(LoadedPipeline {
            def,
            prompts,
            transitions,
            model: resolved.model,
            settings,
            report: resolved.report,
            counter,
            budgets: resolved.budgets,
            budget_options,
            step_bound,
            model_request_bound,
            cost_bound: resolved.cost,
            models: resolved.models,
            price: resolved.price,
            spend_caps,
            billed_token_ratio,
            warnings,
            assembler,
            taking_fetched_texts,
        })
    }

    /// What does not stop the pipeline from loading but is likely a mistake, each also logged
    /// as a WARN of `ctx::pipeline` when it loads: today an `on_over` no conversation can take
    /// (`BUDGET_ON_OVER_NEVER_TAKEN`: the context is empty whenever its step runs).
    pub fn warnings(&self) -> &[ConfigIssue] {
        &self.warnings
    }

    /// The assembler of the pipeline's `contexts`, with its model's counter and the compactors
    /// of [`LoadOptions`] (none when the pipeline declares no context). Its retrievers are the
    /// run's ([`StepEnv::retriever`](super::StepEnv::retriever)).
    pub fn assembler(&self) -> Option<&crate::engine::ContextAssembler> {
        self.assembler.as_deref()
    }

    /// The user compactors and the node frame its `manage_context_budget` steps use.
    pub fn budget_options(&self) -> &BudgetOptions {
        &self.budget_options
    }

    /// The definition as loaded (prompts provided at load time are not written into it).
    pub fn definition(&self) -> &PipelineDef {
        &self.def
    }

    /// Checks that this pipeline runs exactly the steps of `def` (ids, kinds, fields and
    /// transitions), as a typed `pipeline!` wrapper needs when it takes a pipeline loaded
    /// elsewhere (its step enum indexes them); the model block may differ.
    pub fn check_steps_match(&self, def: &PipelineDef) -> Result<(), CtxError> {
        if self.def.steps == def.steps {
            return Ok(());
        }
        let issue = ConfigIssue::new(
            Code::PipelineStepsDiffer,
            FieldPath::root().key("steps"),
            format!("the loaded pipeline `{}` does not run the steps of `{}`", self.def.name, def.name),
        )
        .with_help(format!("load `{}`'s own definition (`{}::definition()`)", def.name, def.name));
        Err(ConfigIssues::new(format!("pipeline `{}`", def.name), vec![issue]).into())
    }

    /// The pipeline's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The index of the step `id`.
    pub fn step_index(&self, id: &str) -> Option<usize> {
        self.def.steps.iter().position(|s| s.id == id)
    }

    /// The id of the step where a run starts.
    pub fn first_step(&self) -> &str {
        self.def.steps.first().map_or(END, |s| s.id.as_str())
    }

    /// The key and target of transition `transition` of step `index` (`None` when the step
    /// has no such transition).
    pub fn transition(&self, index: usize, transition: Transition) -> Option<(&str, Target)> {
        self.transitions.get(index)?.get(transition.position()).map(|(k, t)| (k.as_str(), *t))
    }

    /// The id a target names (`end` for [`Target::End`]).
    pub fn target_id(&self, target: Target) -> &str {
        match target {
            Target::End => END,
            Target::Step(i) => self.def.steps.get(i).map_or(END, |s| s.id.as_str()),
        }
    }

    /// The text of prompt `key`.
    pub fn prompt(&self, key: &str) -> Option<&str> {
        self.prompts.get(key).map(String::as_str)
    }

    /// The model's limits.
    pub fn model(&self) -> &ModelConfig {
        &self.model
    }

    /// The settings in effect (after any clamp).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The budget contract's report: every `call_model` and `agent` step's terms, and every clamp.
    pub fn contract_report(&self) -> &ContractReport {
        &self.report
    }

    /// The token counter of the model's encoding and chat format.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// The model's context window.
    pub fn context_window(&self) -> usize {
        self.model.context_window
    }

    /// The global context budget in effect (possibly clamped).
    pub fn max_context_tokens(&self) -> usize {
        self.report.max_context_tokens
    }

    /// The history budget, when set.
    pub fn max_history_tokens(&self) -> Option<usize> {
        self.settings.max_history_tokens
    }

    /// How history over [`max_history_tokens`](Self::max_history_tokens) is cut
    /// (`settings.history_trim`, checked when the pipeline was loaded).
    pub fn history_trim(&self) -> crate::config::HistoryTrimPolicy {
        // Validated by `resolve` at load time, so the error arm is never taken.
        crate::config::HistoryTrimPolicy::from_spec(&self.def.settings, &crate::validation::FieldPath::root())
            .unwrap_or_default()
    }

    /// The model's price: its `price` block, else ctx's price table for its name; `None` when
    /// neither prices it (a rule that needs a price reported that when the pipeline was loaded).
    pub fn price(&self) -> Option<crate::config::Price> {
        self.price
    }

    /// The named models (`models { … }`), resolved, in declaration order.
    pub fn named_models(&self) -> &[NamedModel] {
        &self.models
    }

    /// The model step `step_id` uses: its named model (`model: NAME`), else the default model
    /// (whose counter is [`Self::counter`]). Its window, counter and price are what the step's
    /// requests are negotiated, guarded, counted and priced with.
    pub fn step_model(&self, step_id: &str) -> StepModelRef<'_> {
        let name = self
            .def
            .steps
            .iter()
            .find(|s| s.id == step_id)
            .and_then(|s| s.kind.model_request())
            .and_then(|c| c.model.as_deref());
        match name.and_then(|name| self.models.iter().find(|m| m.name == name)) {
            Some(m) => StepModelRef { name: Some(&m.name), config: &m.config, counter: &m.counter, price: m.price },
            None => StepModelRef { name: None, config: &self.model, counter: &self.counter, price: self.price },
        }
    }

    /// The most a run from the first step can cost, proven from the graph, the contract and the
    /// model's price ([`contract::cost_bound`](crate::contract::cost_bound)): per model step its
    /// runs, worst request and cost, and the total. `None` when the model has no price.
    pub fn cost_bound(&self) -> Option<&ctx_spec::contract::CostBound> {
        self.cost_bound.as_ref()
    }

    /// The spend caps every run of this pipeline is held to: `settings.max_cost_per_run` (or
    /// [`LoadOptions::max_cost_per_run`]) and [`LoadOptions::max_cost_per_conversation`].
    pub fn spend_caps(&self) -> super::SpendCaps {
        self.spend_caps
    }

    /// The billed-to-counted token ratio the spend caps assume for a model whose provider's usage
    /// has not shown a higher one: `settings.billed_token_ratio` or
    /// [`LoadOptions::billed_token_ratio`], else 1 (see [`WorstRequest`](super::WorstRequest) for
    /// what a cap then promises).
    pub fn billed_token_ratio(&self) -> f64 {
        self.billed_token_ratio
    }

    /// The key a step's model is known by in [`SpendTotals::billed_ratios`](crate::state::SpendTotals::billed_ratios):
    /// its name, or `default` for the pipeline's `model` block.
    pub fn step_model_key(&self, step_id: &str) -> &str {
        self.step_model(step_id).name.unwrap_or(ctx_spec::pipeline::DEFAULT_MODEL_NAME)
    }

    /// A named setting (`max_turn_loops`, …).
    pub fn setting(&self, name: &str) -> Option<u64> {
        self.settings.get(name)
    }

    /// The output limit in effect for `call_model` step `step_id` (possibly clamped).
    pub fn output_tokens(&self, step_id: &str) -> Option<usize> {
        self.report.step(step_id).map(|s| s.output_tokens)
    }

    /// The validated configuration of the `manage_context_budget` step at `index`.
    /// Whether the model step `step` appends the fetched texts waiting in `node_texts` to the
    /// context before it renders its request: it renders the context and is reached from a
    /// `fetch_node_texts` step through no `manage_context_budget` step
    /// ([`steps_taking_fetched_texts`](crate::pipeline::steps_taking_fetched_texts)).
    pub fn takes_fetched_texts(&self, step: &str) -> bool {
        self.taking_fetched_texts.contains(step)
    }

    pub(crate) fn budget_config(&self, index: usize, step: &str) -> Result<&ManageBudgetConfig, PipelineError> {
        self.budgets
            .get(&index)
            .ok_or_else(|| PipelineError::NotResolved { pipeline: self.def.name.clone(), step: step.to_owned() })
    }

    /// The most steps a run can take, proven from the graph and its loop guards: the longest
    /// walk, each `loop_guard` allowing exactly its limit of loops, from any step and any loop
    /// counts (so that it bounds a run resumed from any snapshot too; a run that would pass it
    /// is stopped with an error).
    pub fn step_bound(&self) -> u64 {
        self.step_bound
    }

    /// The most model requests a run from the first step with an empty context (as a
    /// conversation starts one) can make, by the same analysis, an `on_over` such a run never
    /// takes (`BUDGET_ON_OVER_NEVER_TAKEN`) left out as the cost bound leaves it: only `call_model` (1) and
    /// `agent` steps (`max_tool_calls + 1`; see
    /// [`StepBudget::max_model_requests`](crate::contract::StepBudget)) send requests, and the
    /// bound is the heaviest run, not the step bound times the heaviest step. 0 when no step
    /// calls the model.
    pub fn model_request_bound(&self) -> u64 {
        self.model_request_bound
    }
}

/// The prompts of `opts`: each must be declared in the definition without a text; files are read.
fn provided_prompts(
    def: &PipelineDef,
    opts: &LoadOptions,
    issues: &mut Vec<ConfigIssue>,
) -> Result<BTreeMap<String, String>, CtxError> {
    let keys: Vec<&str> = def.prompts.iter().map(|p| p.key.as_str()).collect();
    let mut provided = BTreeMap::new();
    for (key, source) in &opts.prompts {
        let path = FieldPath::root().key("prompts").key(key.as_str());
        match def.prompts.iter().find(|p| &p.key == key) {
            None => {
                issues.push(
                    ConfigIssue::new(
                        Code::UnknownPrompt,
                        path,
                        format!(
                            "a text is provided for prompt `{key}`, which pipeline `{}` does not declare",
                            def.name
                        ),
                    )
                    .with_help(help_for_unknown(key, "prompt", &keys)),
                );
                continue;
            }
            Some(p) if p.text.is_some() => {
                issues.push(
                    ConfigIssue::new(
                        Code::PromptAlreadyDefined,
                        path,
                        format!("prompt `{key}` has a text in the definition and another one is provided at load time"),
                    )
                    .with_help(format!(
                        "declare `{key}` without a text to provide it at load time, or drop the load-time text"
                    )),
                );
                continue;
            }
            Some(_) => {}
        }
        let text = match source {
            PromptSource::Text(t) => t.clone(),
            PromptSource::File(file) => {
                let file = opts.resolve(file);
                std::fs::read_to_string(&file).map_err(|source| PipelineError::PromptFile {
                    key: key.clone(),
                    path: file.display().to_string(),
                    source,
                })?
            }
        };
        if provided.insert(key.clone(), text).is_some() {
            issues.push(
                ConfigIssue::new(
                    Code::PromptProvidedTwice,
                    FieldPath::root().key("prompts").key(key.as_str()),
                    format!("prompt `{key}` is provided twice at load time"),
                )
                .with_help("provide each prompt once"),
            );
        }
    }
    Ok(provided)
}

/// An issue about a prompt whose text was read from a file given to
/// [`LoadOptions::prompt_file`] names that file: the prompt's path (`prompts.answer`) alone
/// does not say where its text is.
fn name_prompt_files(issues: &mut [ConfigIssue], opts: &LoadOptions) {
    for (key, source) in &opts.prompts {
        let PromptSource::File(file) = source else { continue };
        let at = FieldPath::root().key("prompts").key(key.as_str());
        for issue in issues.iter_mut().filter(|i| i.path == at) {
            issue.message.push_str(&format!(" (prompt `{key}` was read from `{}`)", opts.resolve(file).display()));
        }
    }
}

/// The most steps and the most model requests of a run: the graph's run bound (exact unless the
/// loop limits are huge, then the product bound), each guard allowing its setting's limit.
fn run_bounds(def: &PipelineDef, graph: &StepGraph<'_>, settings: &Settings, report: &ContractReport) -> (u64, u64) {
    let limit = |i: usize| match def.steps.get(i).map(|s| &s.kind) {
        Some(StepKind::LoopGuard(g)) => settings.get(&g.max_turn_loops_from_settings).unwrap_or(0),
        _ => 0,
    };
    let requests = |i: usize| {
        def.steps
            .get(i)
            .and_then(|s| report.step(&s.id))
            .map_or(0, |b| u64::try_from(b.max_model_requests).unwrap_or(u64::MAX))
    };
    // Validated: the graph has no unguarded cycle, so both bounds exist.
    // The step bound caps every resumed run too, whatever its snapshot's counts: from any state.
    let steps = graph.run_bound(limit, |_| 1).map_or(u64::MAX, |b| b.from_any_state);
    // The requests of a run from the first step with an empty context, as the cost bound counts
    // them: an `on_over` such a run never takes (`BUDGET_ON_OVER_NEVER_TAKEN`) sends none.
    let fresh = ctx_spec::pipeline::context_flow::fresh_run_graph(def);
    let model_requests = fresh.run_bound(limit, requests).map_or(u64::MAX, |b| b.max);
    (steps, model_requests)
}

/// The spend caps: `max_cost_per_run` from `opts` (else the settings) and
/// `max_cost_per_conversation` from `opts`; a cap given in `opts` that is not a number > 0, or
/// any cap without a price for the model, is an issue (the settings' own cap is checked by the
/// price rules, under `settings.max_cost_per_run`).
fn spend_caps(def: &PipelineDef, opts: &LoadOptions, priced: bool, issues: &mut Vec<ConfigIssue>) -> super::SpendCaps {
    let mut option = |bits: Option<u64>, key: &str| -> Option<u64> {
        let usd = f64::from_bits(bits?);
        let at = FieldPath::root().key(key);
        if !(usd.is_finite() && usd > 0.0) {
            issues.push(
                ConfigIssue::new(
                    Code::InvalidMaxCostPerRun,
                    at,
                    format!("`LoadOptions::{key}` is {usd}; it must be a number of US dollars > 0"),
                )
                .with_help(format!("pass the most it may spend, e.g. `LoadOptions::new().{key}(0.05)`")),
            );
            return None;
        }
        if !priced {
            issues.push(
                ConfigIssue::new(
                    Code::MissingPrice,
                    at,
                    format!("`LoadOptions::{key}` needs the model's price, and the model has none"),
                )
                .with_help("give the model a `price` block, e.g. `price: { input: 2.50, output: 10.00 }`"),
            );
            return None;
        }
        Some(ctx_spec::contract::nano_usd(usd))
    };
    let run = option(opts.max_cost_per_run, "max_cost_per_run");
    let conversation = option(opts.max_cost_per_conversation, "max_cost_per_conversation");
    let settings_cap = def.settings.max_cost_per_run.filter(|c| c.is_finite() && *c > 0.0);
    let run = if opts.max_cost_per_run.is_some() { run } else { settings_cap.map(ctx_spec::contract::nano_usd) };
    super::SpendCaps::new(run, conversation)
}

/// The billed-to-counted token ratio in effect: [`LoadOptions::billed_token_ratio`], else
/// `settings.billed_token_ratio` (checked by the price rules), else 1; an option that is not a
/// number >= 1 is an issue.
fn billed_token_ratio(def: &PipelineDef, opts: &LoadOptions, issues: &mut Vec<ConfigIssue>) -> f64 {
    let default = crate::config::DEFAULT_BILLED_TOKEN_RATIO;
    let valid = |r: f64| crate::config::billed_token_ratio_issue(r, FieldPath::root(), "").is_none();
    match opts.billed_token_ratio.map(f64::from_bits) {
        Some(r) => {
            let at = FieldPath::root().key("billed_token_ratio");
            let issue = crate::config::billed_token_ratio_issue(r, at, "LoadOptions::billed_token_ratio");
            issues.extend(issue);
            if valid(r) { r } else { default }
        }
        None => def.settings.billed_token_ratio.filter(|&r| valid(r)).unwrap_or(default),
    }
}

/// Every language declared in `settings { compactors: [...] }` must have a compactor in
/// `opts`: the macro checked the rules against the declaration, this checks the declaration
/// against what the caller registered.
fn unregistered_compactors(def: &PipelineDef, opts: &LoadOptions) -> Vec<ConfigIssue> {
    let registered: Vec<&str> = opts.compactors.user_names().collect();
    def.settings
        .compactors
        .iter()
        .enumerate()
        .filter(|(_, name)| !registered.contains(&name.as_str()))
        .map(|(i, name)| {
            let help = if registered.is_empty() {
                format!("register it: `LoadOptions::new().compactor(\"{name}\", MyCompactor)?`")
            } else {
                format!(
                    "register a compactor as `{name}` (`LoadOptions::compactor`); registered: {}",
                    registered.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
                )
            };
            ConfigIssue::new(
                Code::CompactorNotRegistered,
                FieldPath::root().key("settings").key("compactors").index(i),
                format!("compactor language `{name}` is declared but no compactor for it was registered"),
            )
            .with_help(help)
        })
        .collect()
}

#[cfg(test)]
#[path = "loaded_tests.rs"]
mod tests;

/// The assembler of `def`'s contexts (none without any), counting with the pipeline's counter,
/// with the compactors of `opts`; its retrievers come with each run. Its declarations passed the
/// engine's rules in validation; what is left to fail is a compactor they name that `opts` does
/// not register, reported under `contexts` as every other issue of loading.
fn assembler(
    def: &PipelineDef,
    counter: &TokenCounter,
    opts: &LoadOptions,
) -> Result<Option<std::sync::Arc<crate::engine::ContextAssembler>>, CtxError> {
    if def.contexts.contexts.is_empty() {
        return Ok(None);
    }
    let built = crate::engine::ContextAssembler::builder(def.contexts.clone(), counter.clone())
        .compactors(opts.compactors.clone())
        .retrievers_at_assembly()
        .build();
    match built {
        Ok(assembler) => Ok(Some(std::sync::Arc::new(assembler))),
        Err(crate::engine::EngineError::Config(mut issues)) => {
            let base = FieldPath::root().key("contexts");
            for issue in &mut issues.issues {
                issue.path = FieldPath(base.0.iter().cloned().chain(issue.path.0.drain(..)).collect());
            }
            issues.source_name = format!("pipeline `{}`", def.name);
            Err(issues.into())
        }
        Err(other) => Err(other.into()),
    }
}
