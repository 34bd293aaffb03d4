//! [`LoadedPipeline`]: a validated definition with everything a run needs resolved — prompt
//! texts, the model's limits, the settings, the transitions as step indices and the proven
//! bound on a run's length.

use std::collections::BTreeMap;

use crate::error::CtxError;
use crate::tokens::TokenCounter;
use crate::validation::ConfigIssues;

use super::definition::{END, PipelineDef, StepKind};
use super::graph::{StepGraph, Target};
use super::validate::{ValidateOptions, validate_definition};

/// The resolved numbers a run uses.
#[derive(Debug, Clone)]
pub(crate) struct RunLimits {
    pub counter: TokenCounter,
    pub context_window: usize,
    pub max_context_tokens: usize,
    pub max_history_tokens: Option<usize>,
    pub settings: BTreeMap<String, u64>,
    /// The output limit in effect for each `call_model` step, by step id.
    pub output_tokens: BTreeMap<String, usize>,
}

/// A pipeline ready to run.
#[derive(Debug, Clone)]
pub struct LoadedPipeline {
    def: PipelineDef,
    prompts: BTreeMap<String, String>,
    transitions: Vec<Vec<(String, Target)>>,
    limits: RunLimits,
    step_bound: u64,
}

impl LoadedPipeline {
    /// Assembles a pipeline from a definition and its resolved limits, after checking the
    /// definition (every issue is reported at once).
    #[cfg_attr(not(test), allow(dead_code))] // `load` calls it once the config module is on main
    pub(crate) fn from_parts(
        def: PipelineDef,
        prompts: BTreeMap<String, String>,
        limits: RunLimits,
    ) -> Result<Self, CtxError> {
        let issues = validate_definition(&def, &ValidateOptions { check_tokens: false, env_limits_policy: None });
        ConfigIssues::check(format!("pipeline `{}`", def.name), issues)?;
        let graph = StepGraph::new(&def);
        let transitions = def
            .steps
            .iter()
            .enumerate()
            .map(|(i, _)| {
                graph
                    .edges(i)
                    .iter()
                    .map(|e| {
                        let target = if e.target == END {
                            Target::End
                        } else {
                            // Validated: every target is a step; an unresolvable one ends the run.
                            graph.index_of(e.target).map_or(Target::End, Target::Step)
                        };
                        (e.key.to_owned(), target)
                    })
                    .collect()
            })
            .collect();
        let longest = graph.longest_unguarded_path().unwrap_or(def.steps.len()) as u64;
        let allowed_loops: u64 = def
            .steps
            .iter()
            .filter_map(|s| match &s.kind {
                StepKind::LoopGuard(g) => limits.settings.get(&g.max_turn_loops_from_settings).copied(),
                _ => None,
            })
            .fold(0u64, u64::saturating_add);
        let step_bound = allowed_loops.saturating_add(1).saturating_mul(longest);
        let mut all_prompts: BTreeMap<String, String> =
            def.prompts.iter().filter_map(|p| Some((p.key.clone(), p.text.clone()?))).collect();
        for (k, v) in prompts {
            all_prompts.entry(k).or_insert(v);
        }
        Ok(LoadedPipeline { def, prompts: all_prompts, transitions, limits, step_bound })
    }

    /// The definition as loaded (prompts provided at load time are not written into it).
    pub fn definition(&self) -> &PipelineDef {
        &self.def
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

    /// The key and target of transition `transition` of step `index`.
    pub fn transition(&self, index: usize, transition: usize) -> Option<(&str, Target)> {
        self.transitions.get(index)?.get(transition).map(|(k, t)| (k.as_str(), *t))
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

    /// The token counter of the model's encoding.
    pub fn counter(&self) -> &TokenCounter {
        &self.limits.counter
    }

    /// The model's context window.
    pub fn context_window(&self) -> usize {
        self.limits.context_window
    }

    /// The global context budget in effect (possibly clamped).
    pub fn max_context_tokens(&self) -> usize {
        self.limits.max_context_tokens
    }

    /// The history budget, when set.
    pub fn max_history_tokens(&self) -> Option<usize> {
        self.limits.max_history_tokens
    }

    /// A named setting (`max_turn_loops`, …).
    pub fn setting(&self, name: &str) -> Option<u64> {
        self.limits.settings.get(name).copied()
    }

    /// The output limit in effect for `call_model` step `step_id`.
    pub fn output_tokens(&self, step_id: &str) -> Option<usize> {
        self.limits.output_tokens.get(step_id).copied()
    }

    /// The most steps a run can take, proven from the graph (see the `graph` module): at most
    /// `(Σ loop limits + 1) × (steps on the longest path without a loop_guard's on_allow)`.
    pub fn step_bound(&self) -> u64 {
        self.step_bound
    }
}
