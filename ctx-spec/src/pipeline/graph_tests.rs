use super::*;
use crate::pipeline::testing::*;

fn graph_codes(def: &PipelineDef) -> Vec<(&'static str, String)> {
    codes(&StepGraph::new(def).issues())
}

#[test]
fn the_spec_compaction_loop_is_valid_and_bounded() {
    let d = compaction_loop();
    assert_eq!(graph_codes(&d), vec![]);
    // G′ (no on_allow edge): search → fetch → manage_budget → guard → answer → end, and
    // summarize → set → manage_budget → …: the longest path has 5 steps.
    assert_eq!(StepGraph::new(&d).longest_unguarded_path(), Some(5));
}

/// The model requests of one visit: 1 for `call_model`, `max_tool_calls + 1` for `agent`.
fn requests(d: &PipelineDef) -> impl Fn(usize) -> u64 + '_ {
    |i| match &d.steps[i].kind {
        StepKind::CallModel(_) => 1,
        StepKind::Agent(a) => u64::try_from(a.max_tool_calls).unwrap_or(0) + 1,
        _ => 0,
    }
}

#[test]
fn the_run_bound_counts_only_what_a_run_can_do() {
    // Issue 26 item 8: the compaction loop with 3 loops summarises at most 3 times and answers
    // once: 4 requests, not (3 + 1) × 5 = 20; and 4 + 3 × 4 + 1 = 17 steps.
    let d = compaction_loop();
    let g = StepGraph::new(&d);
    let bound = g.run_bound(|_| 3, requests(&d)).unwrap();
    assert_eq!((bound.max, bound.exact), (4, true));
    // Step by step: the summariser 3 times, the answer once.
    let run = g.heaviest_run(|_| 3, requests(&d)).unwrap();
    let model_visits: Vec<(&str, u64)> = d
        .steps
        .iter()
        .zip(&run.visits)
        .filter(|(s, _)| matches!(s.kind, StepKind::CallModel(_) | StepKind::Agent(_)))
        .map(|(s, v)| (s.id.as_str(), *v))
        .collect();
    assert_eq!(model_visits, [("summarize", 3), ("answer", 1)]);
    assert_eq!(g.run_bound(|_| 3, |_| 1).unwrap().max, 17);
    assert_eq!(g.run_bound(|_| 0, requests(&d)).unwrap().max, 1);

    // One agent step (2 tool calls): 3 requests, once.
    let d = def(vec![search("search", "answer"), agent("answer", END)]);
    let g = StepGraph::new(&d);
    assert_eq!(g.run_bound(|_| 5, requests(&d)).unwrap().max, 3);
    assert_eq!(g.run_bound(|_| 5, |_| 1).unwrap().max, 2);

    // Two branches: the heavier one counts, not their sum.
    let d = def(vec![
        custom("route", &[("a", "one"), ("b", "agent")]),
        call("one", "answer", END),
        agent("agent", "two"),
        call("two", "answer", END),
    ]);
    assert_eq!(StepGraph::new(&d).run_bound(|_| 0, requests(&d)).unwrap().max, 4);

    // Nested guards: the inner guard's count is not reset by the outer loop.
    let d = def(vec![guard("outer", "inner", END), guard("inner", "work", "outer"), call("work", "answer", "inner")]);
    let g = StepGraph::new(&d);
    // outer allows 2, inner allows 3 in all: work runs 3 times.
    let limit = |i: usize| if i == 0 { 2 } else { 3 };
    assert_eq!(g.run_bound(limit, requests(&d)).unwrap().max, 3);

    // Limits too large for the exact programme: the product bound, flagged as such.
    let d = compaction_loop();
    let huge = StepGraph::new(&d).run_bound(|_| u64::from(u32::MAX), requests(&d)).unwrap();
    assert!(!huge.exact);
    assert_eq!((huge.max, huge.from_any_state), ((u64::from(u32::MAX) + 1) * 2, (u64::from(u32::MAX) + 1) * 2));
    // From any state the loop can start again with its count reset: at summarize, 3 more
    // loops, then the answer: 1 + 3 + 1 requests.
    assert_eq!(StepGraph::new(&d).run_bound(|_| 3, requests(&d)).unwrap().from_any_state, 5);

    let huge_run = StepGraph::new(&d).heaviest_run(|_| u64::from(u32::MAX), requests(&d)).unwrap();
    let requests_of = requests(&d);
    let sum: u64 = huge_run.visits.iter().enumerate().map(|(i, v)| v * requests_of(i)).sum();
    assert_eq!(sum, huge.max);

    // An unguarded cycle has no bound.
    let d = def(vec![search("a", "b"), search("b", "a")]);
    assert_eq!(StepGraph::new(&d).run_bound(|_| 1, |_| 1), None);
    assert_eq!(StepGraph::new(&d).heaviest_run(|_| 1, |_| 1), None);
}

#[test]
fn no_steps_is_one_issue() {
    assert_eq!(graph_codes(&def(vec![])), vec![("PIPELINE_NO_STEPS", "steps".into())]);
}

#[test]
fn duplicate_and_reserved_ids() {
    let d = def(vec![search("a", "b"), fetch("b", "end"), fetch("a", "end"), fetch("end", "end")]);
    let issues = StepGraph::new(&d).issues();
    let c = codes(&issues);
    assert!(c.contains(&("DUPLICATE_STEP_ID", "steps[2].id".into())), "{c:?}");
    assert!(c.contains(&("RESERVED_STEP_ID", "steps[3].id".into())), "{c:?}");
    let dup = issues.iter().find(|i| i.code == "DUPLICATE_STEP_ID").unwrap();
    assert!(dup.message.contains("`a`") && dup.message.contains("steps[0]"), "{}", dup.message);
    // A later duplicate is not reported unreachable on top of being a duplicate.
    assert!(!c.contains(&("UNREACHABLE_STEP", "steps[2].id".into())), "{c:?}");
}

#[test]
fn empty_id_and_variant_clashes() {
    let d = def(vec![search("fetch_a", "fetch__a"), fetch("fetch__a", "End"), fetch("End", "end"), fetch("", "end")]);
    let c = graph_codes(&d);
    assert!(c.contains(&("STEP_VARIANT_CLASH", "steps[1].id".into())), "{c:?}");
    assert!(c.contains(&("STEP_VARIANT_CLASH", "steps[2].id".into())), "{c:?}");
    assert!(c.contains(&("INVALID_STEP_ID", "steps[3].id".into())), "{c:?}");
    assert_eq!(variant_name("manage_budget"), "ManageBudget");
    assert_eq!(variant_name("_a__b_"), "AB");
}

#[test]
fn unknown_target_suggests_and_does_not_cascade() {
    let d = def(vec![search("search", "fetc"), fetch("fetch", "end")]);
    let issues = StepGraph::new(&d).issues();
    assert_eq!(codes(&issues), vec![("UNKNOWN_STEP_TARGET", "steps[0].next".into())]);
    let issue = &issues[0];
    assert!(issue.message.contains("`fetc`") && issue.message.contains("`search`"), "{}", issue.message);
    assert_eq!(issue.help.as_deref(), Some("did you mean `fetch`? (known targets: `search`, `fetch`, `end`)"));

    // Without a close name: no suggestion, and the step is not said to miss `end` either.
    let d = def(vec![search("search", "zzz"), fetch("fetch", "end")]);
    let c = graph_codes(&d);
    assert_eq!(c, vec![("UNKNOWN_STEP_TARGET", "steps[0].next".into()), ("UNREACHABLE_STEP", "steps[1].id".into())]);
}

#[test]
fn custom_outcome_targets_have_their_own_paths() {
    let d = def(vec![custom("route", &[("yes", "end"), ("no", "nowhere")])]);
    assert_eq!(graph_codes(&d), vec![("UNKNOWN_STEP_TARGET", "steps[0].outcomes.no".into())]);
    let d = def(vec![search("s", "route"), custom("route", &[])]);
    assert_eq!(graph_codes(&d), vec![("CUSTOM_WITHOUT_OUTCOMES", "steps[1].outcomes".into())]);
}

#[test]
fn unreachable_step() {
    let d = def(vec![search("search", "end"), fetch("orphan", "end")]);
    let issues = StepGraph::new(&d).issues();
    assert_eq!(codes(&issues), vec![("UNREACHABLE_STEP", "steps[1].id".into())]);
    assert!(issues[0].message.contains("`orphan`") && issues[0].message.contains("`search`"));
}

#[test]
fn end_unreachable_is_reported_per_step() {
    // a → b → a with a guard whose on_deny also loops back: nothing reaches `end`.
    let d = def(vec![guard("g", "a", "a"), search("a", "g")]);
    let c = graph_codes(&d);
    assert!(c.contains(&("END_UNREACHABLE", "steps[0].id".into())), "{c:?}");
    assert!(c.contains(&("END_UNREACHABLE", "steps[1].id".into())), "{c:?}");
}

#[test]
fn unguarded_cycle_reports_the_closing_edge_and_the_cycle() {
    // The spec's loop without its guard: manage_budget.on_over goes straight to summarize.
    let d = def(vec![
        search("search", "manage_budget"),
        budget("manage_budget", "answer", "summarize"),
        call("summarize", "summarizer", "set_ctx"),
        set("set_ctx", vec![], "manage_budget"),
        call("answer", "answer", "end"),
    ]);
    let issues = StepGraph::new(&d).issues();
    assert_eq!(codes(&issues), vec![("UNGUARDED_CYCLE", "steps[3].next".into())]);
    let m = &issues[0].message;
    assert!(m.contains("manage_budget -> summarize -> set_ctx -> manage_budget"), "{m}");
    assert!(issues[0].help.as_deref().unwrap_or("").contains("loop_guard"));
    assert_eq!(StepGraph::new(&d).longest_unguarded_path(), None);
}

#[test]
fn a_guard_on_the_cycle_through_on_deny_does_not_bound_it() {
    // The guard sits on the loop, but the loop continues through its on_deny.
    let d = def(vec![
        budget("manage_budget", "end", "g"),
        guard("g", "end", "summarize"),
        set("summarize", vec![], "manage_budget"),
    ]);
    let issues = StepGraph::new(&d).issues();
    assert_eq!(codes(&issues), vec![("UNGUARDED_CYCLE", "steps[2].next".into())]);
    assert!(issues[0].help.as_deref().unwrap_or("").contains("`g` is on this cycle through its on_deny"));
}

#[test]
fn self_loops_and_guard_self_loops() {
    let d = def(vec![search("s", "s")]);
    let c = graph_codes(&d);
    assert!(c.contains(&("UNGUARDED_CYCLE", "steps[0].next".into())), "{c:?}");
    // A guard that allows itself is bounded: its on_allow consumes a loop.
    let d = def(vec![guard("g", "g", "end")]);
    assert_eq!(graph_codes(&d), vec![]);
    assert_eq!(StepGraph::new(&d).longest_unguarded_path(), Some(1));
}

#[test]
fn two_independent_cycles_are_both_reported() {
    let d = def(vec![
        custom("route", &[("a", "a1"), ("b", "b1"), ("done", "end")]),
        search("a1", "a2"),
        search("a2", "route"),
        search("b1", "b1"),
    ]);
    let c = graph_codes(&d);
    // b1 also has no way out at all.
    assert_eq!(
        c,
        vec![
            ("END_UNREACHABLE", "steps[3].id".into()),
            ("UNGUARDED_CYCLE", "steps[2].next".into()),
            ("UNGUARDED_CYCLE", "steps[3].next".into())
        ],
    );
}

#[test]
fn nested_guarded_loops_are_valid() {
    let d = def(vec![
        search("s", "inner"),
        guard("inner", "work", "outer"),
        set("work", vec![], "inner"),
        guard("outer", "s", "end"),
    ]);
    assert_eq!(graph_codes(&d), vec![]);
    // G′: s → inner → outer → end and work → inner → outer → end.
    assert_eq!(StepGraph::new(&d).longest_unguarded_path(), Some(3));
}

mod termination {
    //! Property: for random step graphs, the cycle rule accepts exactly the graphs whose every
    //! cycle passes a guard's on_allow (checked here by an independent transitive closure), and
    //! on an accepted graph every run — whatever a custom step chooses — ends within the bound
    //! `(Σ limits + 1) × longest path without on_allow`.

    use proptest::prelude::*;

    use super::*;
    use crate::pipeline::definition::{CustomSpec, LoopGuardSpec, StepDef};

    /// Step `i`: a guard (limit, allow, deny) or a custom step (targets). Target `n` is `end`.
    #[derive(Debug, Clone)]
    enum Node {
        Guard(u8, usize, usize),
        Custom(Vec<usize>),
    }

    fn nodes() -> impl Strategy<Value = Vec<Node>> {
        (1usize..7).prop_flat_map(|n| {
            let target = 0..=n;
            let node = prop_oneof![
                (0u8..3, target.clone(), target.clone()).prop_map(|(l, a, d)| Node::Guard(l, a, d)),
                prop::collection::vec(target, 1..3).prop_map(Node::Custom),
            ];
            prop::collection::vec(node, n)
        })
    }

    fn to_def(nodes: &[Node]) -> PipelineDef {
        let name = |t: usize| if t >= nodes.len() { END.to_owned() } else { format!("s{t}") };
        let mut d = def(Vec::new());
        for (i, node) in nodes.iter().enumerate() {
            let kind = match node {
                Node::Guard(limit, a, b) => {
                    d.settings.extra.insert(format!("l{i}"), i64::from(*limit));
                    StepKind::LoopGuard(LoopGuardSpec {
                        max_turn_loops_from_settings: format!("l{i}"),
                        on_allow: name(*a),
                        on_deny: name(*b),
                    })
                }
                Node::Custom(targets) => StepKind::Custom(CustomSpec {
                    outcomes: targets.iter().enumerate().map(|(k, t)| (format!("o{k}"), name(*t))).collect(),
                }),
            };
            d.steps.push(StepDef { id: format!("s{i}"), kind });
        }
        d
    }

    /// Whether some step reaches itself without taking a guard's on_allow edge.
    fn has_unguarded_cycle(nodes: &[Node]) -> bool {
        let n = nodes.len();
        let mut reach = vec![vec![false; n]; n];
        for (i, node) in nodes.iter().enumerate() {
            let targets: Vec<usize> = match node {
                Node::Guard(_, _, deny) => vec![*deny],
                Node::Custom(t) => t.clone(),
            };
            for t in targets.into_iter().filter(|&t| t < n) {
                reach[i][t] = true;
            }
        }
        for k in 0..n {
            for i in 0..n {
                for j in 0..n {
                    if reach[i][k] && reach[k][j] {
                        reach[i][j] = true;
                    }
                }
            }
        }
        (0..n).any(|i| reach[i][i])
    }

    proptest! {
        #[test]
        fn accepted_graphs_always_end_within_the_bound(nodes in nodes(), choices in prop::collection::vec(0usize..4, 1..64)) {
            let d = to_def(&nodes);
            let graph = StepGraph::new(&d);
            let rejected = graph.issues().iter().any(|i| i.code == "UNGUARDED_CYCLE");
            prop_assert_eq!(rejected, has_unguarded_cycle(&nodes));
            if rejected {
                return Ok(());
            }
            let longest = graph.longest_unguarded_path().expect("accepted graphs have a longest path") as u64;
            let limits: u64 = nodes.iter().map(|n| match n { Node::Guard(l, ..) => u64::from(*l), _ => 0 }).sum();
            let bound = (limits + 1) * longest;
            // Walk from every step, a custom step taking the outcomes `choices` dictates.
            for start in 0..nodes.len() {
                let mut counts = vec![0u8; nodes.len()];
                let mut at = start;
                let mut steps = 0u64;
                let mut choice = choices.iter().cycle();
                while at < nodes.len() {
                    steps += 1;
                    prop_assert!(steps <= bound, "run from s{} passed the bound {}", start, bound);
                    at = match &nodes[at] {
                        Node::Guard(limit, allow, deny) => {
                            if counts[at] < *limit { counts[at] += 1; *allow } else { *deny }
                        }
                        Node::Custom(targets) => targets[choice.next().copied().unwrap_or(0) % targets.len()],
                    };
                }
            }
        }
    }
}

mod exact_run_bound {
    //! Property: on random accepted graphs with random per-step costs, [`StepGraph::run_bound`]
    //! is at least the cost of every simulated run and equals the cost of the heaviest run, found
    //! by an independent exhaustive search of the runs' states.

    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;
    use crate::pipeline::definition::{CustomSpec, LoopGuardSpec, StepDef};

    #[derive(Debug, Clone)]
    enum Node {
        Guard(u8, usize, usize),
        Custom(Vec<usize>),
    }

    fn graphs() -> impl Strategy<Value = (Vec<Node>, Vec<u64>)> {
        (1usize..7).prop_flat_map(|n| {
            let target = 0..=n;
            let node = prop_oneof![
                (0u8..4, target.clone(), target.clone()).prop_map(|(l, a, d)| Node::Guard(l, a, d)),
                prop::collection::vec(target, 1..4).prop_map(Node::Custom),
            ];
            (prop::collection::vec(node, n), prop::collection::vec(0u64..5, n))
        })
    }

    fn to_def(nodes: &[Node]) -> PipelineDef {
        let name = |t: usize| if t >= nodes.len() { END.to_owned() } else { format!("s{t}") };
        let mut d = def(Vec::new());
        for (i, node) in nodes.iter().enumerate() {
            let kind = match node {
                Node::Guard(_, a, b) => StepKind::LoopGuard(LoopGuardSpec {
                    max_turn_loops_from_settings: format!("l{i}"),
                    on_allow: name(*a),
                    on_deny: name(*b),
                }),
                Node::Custom(targets) => StepKind::Custom(CustomSpec {
                    outcomes: targets.iter().enumerate().map(|(k, t)| (format!("o{k}"), name(*t))).collect(),
                }),
            };
            d.steps.push(StepDef { id: format!("s{i}"), kind });
        }
        d
    }

    /// The heaviest run from `at` with guard counts `counts`, by exhaustive search.
    fn heaviest(
        nodes: &[Node],
        costs: &[u64],
        at: usize,
        counts: &mut Vec<u8>,
        memo: &mut HashMap<(usize, Vec<u8>), u64>,
    ) -> u64 {
        if at >= nodes.len() {
            return 0;
        }
        if let Some(&v) = memo.get(&(at, counts.clone())) {
            return v;
        }
        let v = costs[at]
            + match &nodes[at] {
                Node::Guard(limit, allow, deny) => {
                    if counts[at] < *limit {
                        counts[at] += 1;
                        let v = heaviest(nodes, costs, *allow, counts, memo);
                        counts[at] -= 1;
                        v
                    } else {
                        heaviest(nodes, costs, *deny, counts, memo)
                    }
                }
                Node::Custom(targets) => {
                    targets.iter().map(|&t| heaviest(nodes, costs, t, counts, memo)).max().unwrap_or(0)
                }
            };
        memo.insert((at, counts.clone()), v);
        v
    }

    proptest! {
        #[test]
        fn the_bound_is_attained_and_never_passed((nodes, costs) in graphs(), choices in prop::collection::vec(0usize..4, 1..64)) {
            let d = to_def(&nodes);
            let graph = StepGraph::new(&d);
            let limit = |i: usize| match nodes[i] { Node::Guard(l, ..) => u64::from(l), Node::Custom(_) => 0 };
            let Some(bound) = graph.run_bound(limit, |i| costs[i]) else {
                // Only a graph with an unguarded cycle has no bound.
                prop_assert!(graph.issues().iter().any(|i| i.code == "UNGUARDED_CYCLE"));
                return Ok(());
            };
            prop_assert!(bound.exact);
            // The heaviest run's visits make up the bound, and are those of a real run: the first
            // step once, and a guard's `on_allow` never more than its limit.
            let run = graph.heaviest_run(limit, |i| costs[i]).unwrap();
            prop_assert_eq!(run.bound, bound);
            prop_assert_eq!(run.visits.iter().zip(&costs).map(|(v, c)| v * c).sum::<u64>(), bound.max);
            prop_assert!(run.visits[0] >= 1);
            let mut memo = HashMap::new();
            let best = heaviest(&nodes, &costs, 0, &mut vec![0; nodes.len()], &mut memo);
            prop_assert_eq!(bound.max, best, "the heaviest run");
            // From any step with any counts up to the limits: every state of the search.
            let mut any = 0;
            let radix: Vec<u8> = nodes.iter().map(|n| match n { Node::Guard(l, ..) => *l + 1, Node::Custom(_) => 1 }).collect();
            let vectors: usize = radix.iter().map(|&r| usize::from(r)).product();
            for index in 0..vectors {
                let mut rest = index;
                let mut counts: Vec<u8> = radix.iter().map(|&r| { let c = (rest % usize::from(r)) as u8; rest /= usize::from(r); c }).collect();
                for at in 0..nodes.len() {
                    any = any.max(heaviest(&nodes, &costs, at, &mut counts, &mut memo));
                }
            }
            prop_assert_eq!(bound.from_any_state, any, "the heaviest walk from any state");
            // A simulated run, custom steps choosing as `choices` dictates.
            let mut counts = vec![0u8; nodes.len()];
            let (mut at, mut cost) = (0usize, 0u64);
            let mut choice = choices.iter().cycle();
            while at < nodes.len() {
                cost += costs[at];
                at = match &nodes[at] {
                    Node::Guard(limit, allow, deny) => {
                        if counts[at] < *limit { counts[at] += 1; *allow } else { *deny }
                    }
                    Node::Custom(targets) => targets[choice.next().copied().unwrap_or(0) % targets.len()],
                };
            }
            prop_assert!(cost <= bound.max, "a run cost {} > {}", cost, bound.max);
        }
    }
}

#[test]
fn graph_wide_codes_are_the_codes_the_graph_rules_emit_about_the_whole_graph() {
    // An unreachable step, an `end` nothing reaches, an unguarded cycle, a custom step without
    // outcomes: each code that `follows_from_graph` is one these rules really emit.
    let mut seen = std::collections::BTreeSet::new();
    for d in [
        def(vec![search("a", "end"), search("b", "end")]),
        def(vec![search("a", "b"), search("b", "a")]),
        def(vec![search("a", "c"), custom("c", &[])]),
    ] {
        for issue in StepGraph::new(&d).issues() {
            if issue.code.follows_from_graph() {
                seen.insert(issue.code);
            }
        }
    }
    let graph_wide = crate::codes::Code::ALL.iter().filter(|c| c.follows_from_graph()).count();
    assert_eq!(seen.len(), graph_wide, "{seen:?}");
}
