//! [`RunBound`]: the most a run can do, proven from the step graph and its loop guards — how many
//! steps it takes, how many model requests it sends, or any other cost a step has per visit.
//!
//! # The exact bound
//!
//! A run is a walk of the graph from the first step. Every step but a `loop_guard` may take any of
//! its transitions (a custom step chooses its outcome, `manage_context_budget` goes `on_ok` or
//! `on_over` as the context decides), so each is taken as possible. A `loop_guard` is not free: it
//! takes `on_allow` exactly while its count is below its limit, counting the loop, and `on_deny`
//! once the limit is reached; every count starts at 0 and nothing else changes it (the `graph`
//! module). The state of a run is therefore the step and the vector of guard counts, and a
//! transition either keeps the vector (every edge of G′, the graph without `on_allow` edges) or
//! raises one count by one (an `on_allow`). G′ is acyclic (the cycle rule), so the states form a
//! directed acyclic graph, and the heaviest run is its heaviest path from (first step, 0…0):
//! a dynamic programme over the states, counts in decreasing mixed-radix order (an `on_allow`
//! leads to a larger index) and, within one vector, the steps in G′'s post-order (successors
//! first). The result is attained by a run of the graph: it is exact, not a bound of a bound.
//!
//! The states number `steps × Π (limit + 1)`. Past [`EXACT_STATES`] of them (limits reach
//! `u32::MAX`) the programme would not fit in memory, and the bound falls back to the product
//! `(Σ limits + 1) × the heaviest path of G′`, which no run exceeds (between two `on_allow` a run
//! follows one path of G′) but which a run may not reach; [`RunBound::exact`] says which.
//!
//! The bound is methods of [`StepGraph`] written here, beside the graph rather than inside it: it
//! reads the graph, and the graph's own rules never need it.

use super::definition::StepKind;
use super::graph::{Resolved, StepGraph, Target};

/// The most states (step × vector of guard counts) the exact programme visits.
pub const EXACT_STATES: u64 = 1 << 21;

/// The most of some per-visit cost (steps, model requests) any run of a pipeline can add up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunBound {
    /// No run from the first step (with every guard count at 0, as a run starts) costs more.
    pub max: u64,
    /// No walk from any step with any guard counts costs more: what a run resumed from any
    /// snapshot can still cost, even one whose counts were reset or written from outside. At
    /// least [`Self::max`]; the cap to enforce on a resumed run.
    pub from_any_state: u64,
    /// Whether some run costs exactly [`Self::max`] (the graph's paths taken as possible).
    /// `false` only when the guards' limits are so large that the product bound was used (see
    /// the module documentation).
    pub exact: bool,
}

/// A heaviest run: the bound, and how many times that run visits each step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeaviestRun {
    /// The bound ([`StepGraph::run_bound`]'s).
    pub bound: RunBound,
    /// `visits[i]`: how many times the run visits step `i`, so that `Σ visits[i] × cost(i)` is
    /// `bound.max` (saturating). With `bound.exact` it is a run of the graph from the first step;
    /// otherwise the product bound's walk: the heaviest path of G′, taken `Σ limits + 1` times.
    pub visits: Vec<u64>,
}

impl StepGraph<'_> {
    /// The most a run can cost when a visit of step `i` costs `cost(i)` and `loop_guard` step `i`
    /// allows `limit(i)` loops (`limit` is asked about guards only). `None` when G′ has a cycle
    /// (a pipeline the cycle rule rejects): no bound exists.
    ///
    /// With `cost = |_| 1` it is the longest run in steps; with the model requests of one visit
    /// (1 for `call_model`, `max_tool_calls + 1` for `agent`, 0 otherwise) the most requests a run
    /// sends. Saturates at `u64::MAX`.
    pub fn run_bound(&self, limit: impl Fn(usize) -> u64, cost: impl Fn(usize) -> u64) -> Option<RunBound> {
        let (back_edges, post_order) = self.unguarded_back_edges();
        if !back_edges.is_empty() {
            return None;
        }
        let n = self.step_count();
        if n == 0 {
            return Some(RunBound { max: 0, from_any_state: 0, exact: true });
        }
        let guards: Vec<(usize, u64)> = (0..n).filter(|&i| self.is_guard(i)).map(|i| (i, limit(i))).collect();
        let costs: Vec<u64> = (0..n).map(&cost).collect();
        let (strides, vectors) = mixed_radix(&guards);
        let exact_size = vectors.and_then(|v| v.checked_mul(n as u64)).filter(|&s| s <= EXACT_STATES);
        match (exact_size, vectors) {
            (Some(_), Some(vectors)) => {
                let (max, from_any_state) = self.exact_bound(&guards, &strides, vectors, &post_order, &costs);
                Some(RunBound { max, from_any_state, exact: true })
            }
            _ => {
                let max = self.product_bound(&guards, &post_order, &costs);
                Some(RunBound { max, from_any_state: max, exact: false })
            }
        }
    }

    /// [`Self::run_bound`], with how many times a run that costs the bound visits each step:
    /// what makes the bound up, step by step (the cost bound of a run prices each step's visits).
    pub fn heaviest_run(&self, limit: impl Fn(usize) -> u64, cost: impl Fn(usize) -> u64) -> Option<HeaviestRun> {
        let (back_edges, post_order) = self.unguarded_back_edges();
        if !back_edges.is_empty() {
            return None;
        }
        let n = self.step_count();
        let guards: Vec<(usize, u64)> = (0..n).filter(|&i| self.is_guard(i)).map(|i| (i, limit(i))).collect();
        let costs: Vec<u64> = (0..n).map(&cost).collect();
        let bound = self.run_bound(|i| guards.iter().find(|g| g.0 == i).map_or(0, |g| g.1), |i| costs[i])?;
        let mut visits = vec![0u64; n];
        if n == 0 {
            return Some(HeaviestRun { bound, visits });
        }
        if bound.exact {
            let (strides, vectors) = mixed_radix(&guards);
            // Exact: the table fits (checked by `run_bound`).
            let vectors = vectors.unwrap_or(1) as usize;
            let (value, guard_of) = self.exact_table(&guards, &strides, vectors, &post_order, &costs);
            // Follow the choices the programme made, from (first step, 0…0): at a guard its one
            // transition, elsewhere a successor of the largest value. Each move raises a count or
            // follows G′, which is acyclic: no state repeats, so the walk ends.
            let (mut index, mut u) = (0usize, 0usize);
            loop {
                visits[u] = visits[u].saturating_add(1);
                let next = match guard_of[u] {
                    Some(k) => {
                        let (_, l) = guards[k];
                        let count = (index as u64 / strides[k]) % (l + 1);
                        self.guard_move(u, count < l, index, strides[k])
                    }
                    None => {
                        let mut best: Option<(u64, usize)> = None;
                        for v in self.edges(u).iter().filter_map(|e| step_of(e.resolved)) {
                            let at = value[index * n + v];
                            if best.is_none_or(|(b, _)| at > b) {
                                best = Some((at, v));
                            }
                        }
                        best.map(|(_, v)| (index, v))
                    }
                };
                match next {
                    Some((state, v)) => (index, u) = (state, v),
                    None => break,
                }
            }
        } else {
            let heaviest = self.heaviest_paths(&post_order, &costs);
            let start = (0..n).max_by_key(|&u| (heaviest[u], std::cmp::Reverse(u))).unwrap_or(0);
            let loops = guards.iter().fold(0u64, |sum, &(_, l)| sum.saturating_add(l)).saturating_add(1);
            let mut u = Some(start);
            while let Some(at) = u {
                visits[at] = visits[at].saturating_add(loops);
                u = self.edges(at).iter().filter(|e| !e.consumes_loop).filter_map(|e| step_of(e.resolved)).fold(
                    None,
                    |best: Option<usize>, v| match best {
                        Some(b) if heaviest[b] >= heaviest[v] => Some(b),
                        _ => Some(v),
                    },
                );
            }
        }
        Some(HeaviestRun { bound, visits })
    }

    /// The dynamic programme of the module documentation: the value of (first step, 0…0) and the
    /// largest value of any state.
    fn exact_bound(
        &self,
        guards: &[(usize, u64)],
        strides: &[u64],
        vectors: u64,
        post_order: &[usize],
        costs: &[u64],
    ) -> (u64, u64) {
        // Fits: vectors × n ≤ EXACT_STATES.
        let (value, _) = self.exact_table(guards, strides, vectors as usize, post_order, costs);
        (value[0], value.iter().copied().max().unwrap_or(0))
    }

    /// Where the guard `u` leads from the counts state `index`: `on_allow` while its count is
    /// below its limit (`allowed`), which raises that count (`stride` is its digit's weight),
    /// else `on_deny` with the counts unchanged. `(state, step)`, or `None` when the transition
    /// ends the run. The one move both the table and the walk of the heaviest run make.
    fn guard_move(&self, u: usize, allowed: bool, index: usize, stride: u64) -> Option<(usize, usize)> {
        let key = if allowed { "on_allow" } else { "on_deny" };
        let state = if allowed { index + stride as usize } else { index };
        self.edges(u).iter().find(|e| e.key == key).and_then(|e| step_of(e.resolved)).map(|v| (state, v))
    }

    /// The programme's table, `value[index × n + step]`, and each step's guard number.
    fn exact_table(
        &self,
        guards: &[(usize, u64)],
        strides: &[u64],
        vectors: usize,
        post_order: &[usize],
        costs: &[u64],
    ) -> (Vec<u64>, Vec<Option<usize>>) {
        let n = self.step_count();
        let mut guard_of = vec![None; n];
        for (k, &(i, _)) in guards.iter().enumerate() {
            guard_of[i] = Some(k);
        }
        let mut value = vec![0u64; vectors * n];
        let mut counts = vec![0u64; guards.len()];
        for index in (0..vectors).rev() {
            // The counts of this index, digit by digit.
            let mut rest = index as u64;
            for (k, &(_, l)) in guards.iter().enumerate() {
                counts[k] = rest % (l + 1);
                rest /= l + 1;
            }
            for &u in post_order {
                let at = |state: usize, step: usize| value[state * n + step];
                let next = match guard_of[u] {
                    Some(k) => self
                        .guard_move(u, counts[k] < guards[k].1, index, strides[k])
                        .map_or(0, |(state, v)| at(state, v)),
                    None => self
                        .edges(u)
                        .iter()
                        .filter_map(|e| step_of(e.resolved))
                        .map(|v| at(index, v))
                        .max()
                        .unwrap_or(0),
                };
                value[index * n + u] = costs[u].saturating_add(next);
            }
        }
        (value, guard_of)
    }

    /// `(Σ limits + 1) × the heaviest path of G′`: between two `on_allow` a run follows one path
    /// of G′, and there are at most Σ limits of them, from whatever state it starts.
    fn product_bound(&self, guards: &[(usize, u64)], post_order: &[usize], costs: &[u64]) -> u64 {
        let heaviest = self.heaviest_paths(post_order, costs);
        let loops = guards.iter().fold(0u64, |sum, &(_, l)| sum.saturating_add(l));
        loops.saturating_add(1).saturating_mul(heaviest.into_iter().max().unwrap_or(0))
    }

    /// The heaviest path of G′ from each step.
    fn heaviest_paths(&self, post_order: &[usize], costs: &[u64]) -> Vec<u64> {
        let mut heaviest = vec![0u64; self.step_count()];
        for &u in post_order {
            let next = self
                .edges(u)
                .iter()
                .filter(|e| !e.consumes_loop)
                .filter_map(|e| step_of(e.resolved))
                .map(|v| heaviest[v])
                .max()
                .unwrap_or(0);
            heaviest[u] = costs[u].saturating_add(next);
        }
        heaviest
    }

    fn is_guard(&self, i: usize) -> bool {
        self.def.steps.get(i).is_some_and(|s| matches!(s.kind, StepKind::LoopGuard(_)))
    }

    fn step_count(&self) -> usize {
        self.def.steps.len()
    }
}

/// Mixed radix: guard k's count has stride Π_{j<k} (limit_j + 1); the number of count vectors,
/// `None` when it overflows.
fn mixed_radix(guards: &[(usize, u64)]) -> (Vec<u64>, Option<u64>) {
    let mut strides = Vec::with_capacity(guards.len());
    let mut vectors: Option<u64> = Some(1);
    for &(_, l) in guards {
        strides.push(vectors.unwrap_or(0));
        vectors = vectors.and_then(|v| v.checked_mul(l.checked_add(1)?));
    }
    (strides, vectors)
}

/// The step a transition leads to; `end` and unknown targets (reported by the graph rules) end
/// the run.
fn step_of(resolved: Resolved) -> Option<usize> {
    match resolved {
        Resolved::Known(Target::Step(v)) => Some(v),
        _ => None,
    }
}
