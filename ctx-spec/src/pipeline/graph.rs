//! The step graph: transitions resolved to step indices, and the graph rules of a pipeline.
//!
//! # Why every run ends
//!
//! Let G′ be the step graph without the `on_allow` edges of `loop_guard` steps. The rule checked
//! here is that G′ has no cycle. Then:
//!
//! * between two `on_allow` transitions a run follows a path of G′, which visits at most `L`
//!   steps, `L` being the number of steps on G′'s longest path (`L ≤ number of steps`);
//! * a `loop_guard` takes `on_allow` only while `state.loop_counts[id] < limit` and increments the
//!   count when it does, and nothing else changes the counts (custom steps that try are stopped
//!   with an error), so guard `g` takes `on_allow` at most `limit(g)` times;
//! * so a run performs at most `(Σ limit(g) + 1) · L` steps, and since every step of G′ has a
//!   transition (an `on_deny` when it is a guard), a run that stops stepping has reached `end`.
//!
//! A cycle that does not pass through some guard's `on_allow` edge is a cycle of G′; the depth
//! first search below reports the edge that closes it (the back edge), with the whole cycle.

use std::collections::{HashMap, VecDeque};

use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath};

use super::definition::{END, PipelineDef, StepKind};
use super::suggest::{did_you_mean, help_for_unknown};

/// Where a transition leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Target {
    /// The step at this index of `PipelineDef::steps`.
    Step(usize),
    /// The run ends.
    End,
}

/// How one transition resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    Known(Target),
    /// No step has this id; `suggestion` is the likely intended step.
    Unknown {
        suggestion: Option<usize>,
    },
}

/// One transition of one step.
#[derive(Debug, Clone)]
pub struct Edge<'a> {
    /// `next`, `on_ok`, …, or a custom outcome name.
    pub key: &'a str,
    /// The target as written.
    pub target: &'a str,
    pub resolved: Resolved,
    /// True for a `loop_guard`'s `on_allow`: taking it consumes one allowed loop.
    pub consumes_loop: bool,
}

/// The pipeline's steps as a graph.
#[derive(Debug)]
pub struct StepGraph<'a> {
    // Read by `run_bound`, the graph's proof of a run's length, which sits beside it.
    pub(super) def: &'a PipelineDef,
    /// The first step with each id (later duplicates are reported, never targeted).
    first_index: HashMap<&'a str, usize>,
    /// `edges[i]`: the transitions of step `i`, in `StepKind::transitions` order.
    edges: Vec<Vec<Edge<'a>>>,
}

/// `steps[i]`.
pub fn step_path(i: usize) -> FieldPath {
    FieldPath::root().key("steps").index(i)
}

/// The path of a transition: `steps[i].next`, or `steps[i].outcomes.<name>` for a custom step.
pub fn transition_path(kind: &StepKind, i: usize, key: &str) -> FieldPath {
    match kind {
        StepKind::Custom(_) => step_path(i).key("outcomes").key(key),
        _ => step_path(i).key(key),
    }
}

/// The UpperCamelCase name a step id gets as a variant of the generated step enum
/// (`manage_budget` → `ManageBudget`); two ids with the same name would clash there.
pub fn variant_name(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for part in id.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

impl<'a> StepGraph<'a> {
    /// Resolves every transition of `def`.
    pub fn new(def: &'a PipelineDef) -> Self {
        let mut first_index = HashMap::new();
        for (i, step) in def.steps.iter().enumerate() {
            first_index.entry(step.id.as_str()).or_insert(i);
        }
        let ids: Vec<&str> = def.steps.iter().map(|s| s.id.as_str()).collect();
        let edges = def
            .steps
            .iter()
            .map(|step| {
                let guard = matches!(step.kind, StepKind::LoopGuard(_));
                step.kind
                    .transitions()
                    .into_iter()
                    .map(|(key, target)| {
                        let resolved = if target == END {
                            Resolved::Known(Target::End)
                        } else if let Some(&j) = first_index.get(target) {
                            Resolved::Known(Target::Step(j))
                        } else {
                            let suggestion =
                                did_you_mean(target, ids.iter().copied()).and_then(|s| first_index.get(s).copied());
                            Resolved::Unknown { suggestion }
                        };
                        Edge { key, target, resolved, consumes_loop: guard && key == "on_allow" }
                    })
                    .collect()
            })
            .collect();
        StepGraph { def, first_index, edges }
    }

    /// The transitions of step `i`.
    pub fn edges(&self, i: usize) -> &[Edge<'a>] {
        self.edges.get(i).map_or(&[], Vec::as_slice)
    }

    /// The graph without transition `key` of step `i` (a transition proven never taken, so that a
    /// bound over the graph's runs does not pay for it; see `context_flow::fresh_run_graph`).
    #[must_use]
    pub fn without_transition(mut self, i: usize, key: &str) -> Self {
        if let Some(edges) = self.edges.get_mut(i) {
            edges.retain(|e| e.key != key);
        }
        self
    }

    /// The index of the (first) step with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.first_index.get(id).copied()
    }

    /// Every graph rule: ids, targets, reachability both ways, guarded cycles.
    pub fn issues(&self) -> Vec<ConfigIssue> {
        let mut issues = Vec::new();
        if self.def.steps.is_empty() {
            issues.push(
                ConfigIssue::new(
                    Code::PipelineNoSteps,
                    FieldPath::root().key("steps"),
                    format!("pipeline `{}` has no steps", self.def.name),
                )
                .with_help("declare at least one step; the first step is where a run starts"),
            );
            return issues;
        }
        self.id_issues(&mut issues);
        self.target_issues(&mut issues);
        self.reachability_issues(&mut issues);
        self.cycle_issues(&mut issues);
        issues
    }

    fn id_issues(&self, issues: &mut Vec<ConfigIssue>) {
        let mut variants: HashMap<String, usize> = HashMap::new();
        for (i, step) in self.def.steps.iter().enumerate() {
            let path = step_path(i).key("id");
            let id = step.id.as_str();
            if id.is_empty() {
                issues.push(
                    ConfigIssue::new(Code::InvalidStepId, path, format!("steps[{i}] has an empty id"))
                        .with_help("give the step a snake_case id, e.g. `fetch`"),
                );
                continue;
            }
            if id == END {
                issues.push(
                    ConfigIssue::new(
                        Code::ReservedStepId,
                        path,
                        "`end` cannot be a step id: it is the target that ends a run",
                    )
                    .with_help("rename this step, e.g. `finish`"),
                );
                continue;
            }
            let first = self.first_index.get(id).copied().unwrap_or(i);
            if first != i {
                issues.push(
                    ConfigIssue::new(
                        Code::DuplicateStepId,
                        path,
                        format!("step id `{id}` is already used by steps[{first}]"),
                    )
                    .with_help(format!("rename one of the two `{id}` steps; transitions go to the first one")),
                );
                continue;
            }
            let variant = variant_name(id);
            if variant == "End" {
                issues.push(
                    ConfigIssue::new(
                        Code::StepVariantClash,
                        path,
                        format!("step id `{id}` becomes the variant `End`, which is reserved for the end of a run"),
                    )
                    .with_help("rename this step, e.g. `finish`"),
                );
            } else if let Some(&other) = variants.get(&variant) {
                let other_id = self.def.steps.get(other).map_or("", |s| s.id.as_str());
                issues.push(
                    ConfigIssue::new(
                        Code::StepVariantClash,
                        path,
                        format!("step ids `{other_id}` and `{id}` both become the step variant `{variant}`"),
                    )
                    .with_help(format!("rename `{id}` so that it differs from `{other_id}` by more than underscores")),
                );
            } else {
                variants.insert(variant, i);
            }
        }
    }

    fn target_issues(&self, issues: &mut Vec<ConfigIssue>) {
        let ids: Vec<&str> = self.def.steps.iter().map(|s| s.id.as_str()).chain([END]).collect();
        for (i, step) in self.def.steps.iter().enumerate() {
            if let StepKind::Custom(spec) = &step.kind
                && spec.outcomes.is_empty()
            {
                issues.push(
                    ConfigIssue::new(
                        Code::CustomWithoutOutcomes,
                        step_path(i).key("outcomes"),
                        format!("custom step `{}` declares no outcome, so it has nowhere to go", step.id),
                    )
                    .with_help("declare at least one outcome and its target, e.g. `done: end`"),
                );
            }
            for edge in self.edges(i) {
                if let Resolved::Unknown { .. } = edge.resolved {
                    issues.push(
                        ConfigIssue::new(
                            Code::UnknownStepTarget,
                            transition_path(&step.kind, i, edge.key),
                            format!(
                                "`{}` of step `{}` goes to `{}`, which is not a step of this pipeline",
                                edge.key, step.id, edge.target
                            ),
                        )
                        .with_help(help_for_unknown(edge.target, "target", &ids)),
                    );
                }
            }
        }
    }

    /// Forward reachability from the first step, and backward reachability from `end`. An unknown
    /// target counts as its suggestion (or, without one, as reaching `end`), so one typo gives one
    /// error rather than a cascade. A step that cannot reach `end` is always on, or leads into, an
    /// unguarded cycle (G′ acyclic means every path of G′ ends); it is reported as well because
    /// it says something the cycle does not: that the cycle has no exit at all.
    fn reachability_issues(&self, issues: &mut Vec<ConfigIssue>) {
        let n = self.def.steps.len();
        if n == 0 {
            return; // reported as PIPELINE_NO_STEPS; there is no first step to start from
        }
        let successor = |e: &Edge<'_>| match e.resolved {
            Resolved::Known(Target::Step(j)) => Some(j),
            Resolved::Unknown { suggestion } => suggestion,
            Resolved::Known(Target::End) => None,
        };
        let mut reached = vec![false; n];
        let mut queue = VecDeque::from([0usize]);
        reached[0] = true;
        while let Some(u) = queue.pop_front() {
            for v in self.edges(u).iter().filter_map(successor) {
                if !reached[v] {
                    reached[v] = true;
                    queue.push_back(v);
                }
            }
        }
        let mut predecessors = vec![Vec::new(); n];
        // A step ends directly when a transition goes to `end` (or, optimistically, to an unknown
        // target). A custom step without outcomes is reported as such; its predecessors are not
        // also told that they cannot end.
        let mut ends: Vec<bool> = (0..n)
            .map(|u| {
                let edges = self.edges(u);
                edges.is_empty() || edges.iter().any(|e| successor(e).is_none())
            })
            .collect();
        for u in 0..n {
            for v in self.edges(u).iter().filter_map(successor) {
                predecessors[v].push(u);
            }
        }
        let mut queue: VecDeque<usize> = (0..n).filter(|&u| ends[u]).collect();
        while let Some(v) = queue.pop_front() {
            for &u in &predecessors[v] {
                if !ends[u] {
                    ends[u] = true;
                    queue.push_back(u);
                }
            }
        }
        let first = self.def.steps.first().map_or("", |s| s.id.as_str());
        for (i, step) in self.def.steps.iter().enumerate() {
            if !reached[i] && self.index_of(&step.id) == Some(i) {
                issues.push(
                    ConfigIssue::new(
                        Code::UnreachableStep,
                        step_path(i).key("id"),
                        format!(
                            "step `{}` can never run: no transition leads to it from `{first}`, the first step",
                            step.id
                        ),
                    )
                    .with_help(format!("route a transition to `{}`, or remove the step", step.id)),
                );
            }
            if !ends[i] {
                issues.push(
                    ConfigIssue::new(
                        Code::EndUnreachable,
                        step_path(i).key("id"),
                        format!(
                            "no path leads from step `{}` to `end`, so a run that gets there never finishes",
                            step.id
                        ),
                    )
                    .with_help("make some transition on the way lead to `end` (a loop_guard's on_deny is a good exit)"),
                );
            }
        }
    }

    /// Depth-first search of G′ (the graph without guards' `on_allow` edges) from every step in
    /// declaration order; every back edge closes a cycle of G′ and is reported once.
    fn cycle_issues(&self, issues: &mut Vec<ConfigIssue>) {
        for (u, key, cycle) in self.unguarded_back_edges().0 {
            let Some(step) = self.def.steps.get(u) else { continue };
            let names: Vec<&str> = cycle
                .iter()
                .chain(cycle.first())
                .filter_map(|&j| self.def.steps.get(j))
                .map(|s| s.id.as_str())
                .collect();
            let guards_on_deny: Vec<&str> = cycle
                .iter()
                .filter_map(|&j| self.def.steps.get(j))
                .filter(|s| matches!(s.kind, StepKind::LoopGuard(_)))
                .map(|s| s.id.as_str())
                .collect();
            let help = if guards_on_deny.is_empty() {
                "route one transition of this cycle to a loop_guard, e.g. `guard: loop_guard { \
                 max_turn_loops_from_settings: max_turn_loops, on_allow: <back into the cycle>, on_deny: <a step out of it> }`"
                    .to_owned()
            } else {
                format!(
                    "the loop_guard `{}` is on this cycle through its on_deny; on_deny must lead out of the loop it guards",
                    guards_on_deny.join("`, `")
                )
            };
            let target = self.edges(u).iter().find(|e| e.key == key).map_or("", |e| e.target);
            issues.push(
                ConfigIssue::new(
                    Code::UnguardedCycle,
                    transition_path(&step.kind, u, key),
                    format!(
                        "`{key}` of step `{}` goes back to `{target}` and closes the cycle {}, which passes through no \
                         loop_guard's on_allow, so nothing bounds how often it runs",
                        step.id,
                        names.join(" -> ")
                    ),
                )
                .with_help(help),
            );
        }
    }

    /// The back edges of G′ as (step, transition key, cycle from the target to the step), and the
    /// DFS post-order of G′'s steps (successors before predecessors when G′ is acyclic).
    #[allow(clippy::type_complexity)]
    pub(super) fn unguarded_back_edges(&self) -> (Vec<(usize, &'a str, Vec<usize>)>, Vec<usize>) {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let n = self.def.steps.len();
        let mut colour = vec![WHITE; n];
        let mut back_edges = Vec::new();
        let mut post_order = Vec::with_capacity(n);
        for root in 0..n {
            if colour[root] != WHITE {
                continue;
            }
            // (step, next edge to look at); the stack is the current DFS path.
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            colour[root] = GREY;
            while let Some(top) = stack.last_mut() {
                let (u, next) = *top;
                top.1 += 1;
                let Some(edge) = self.edges(u).get(next) else {
                    colour[u] = BLACK;
                    post_order.push(u);
                    stack.pop();
                    continue;
                };
                let Resolved::Known(Target::Step(v)) = edge.resolved else { continue };
                if edge.consumes_loop {
                    continue;
                }
                match colour[v] {
                    WHITE => {
                        colour[v] = GREY;
                        stack.push((v, 0));
                    }
                    GREY => {
                        let from = stack.iter().position(|&(w, _)| w == v).unwrap_or(0);
                        let cycle = stack[from..].iter().map(|&(w, _)| w).collect();
                        back_edges.push((u, edge.key, cycle));
                    }
                    _ => {}
                }
            }
        }
        (back_edges, post_order)
    }

    /// The number of steps on the longest path of G′, or `None` when G′ has a cycle (then no run
    /// length bound exists).
    pub fn longest_unguarded_path(&self) -> Option<usize> {
        let (back_edges, post_order) = self.unguarded_back_edges();
        if !back_edges.is_empty() {
            return None;
        }
        let mut longest = vec![0usize; self.def.steps.len()];
        for &u in &post_order {
            let best = self
                .edges(u)
                .iter()
                .filter(|e| !e.consumes_loop)
                .filter_map(|e| match e.resolved {
                    Resolved::Known(Target::Step(v)) => longest.get(v).copied(),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            longest[u] = best + 1;
        }
        longest.into_iter().max()
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
