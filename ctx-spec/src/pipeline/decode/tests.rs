//! The decoder on values built by hand, in both dialects.

use super::*;
use crate::pipeline::definition::*;
use crate::pipeline::schema::StepSchema;
use crate::validation::FieldPath;

/// Hands out a new location for each value, so tests can say which value a problem points at.
#[derive(Default)]
struct Build(u32);

impl Build {
    fn at(&mut self) -> Loc {
        self.0 += 1;
        Loc(self.0)
    }
    fn word(&mut self, text: &str) -> Word {
        Word { text: text.into(), at: self.at() }
    }
    fn v(&mut self, kind: Kind) -> Value {
        Value::new(kind, self.at())
    }
    fn entry(&mut self, key: &str, value: Value) -> Value {
        let key = self.word(key);
        let at = key.at;
        Value::new(Kind::Entry { key, value: Box::new(value) }, at)
    }
    fn name(&mut self, text: &str) -> Value {
        self.v(Kind::Word(text.into()))
    }
    fn int(&mut self, n: i64) -> Value {
        self.v(Kind::Int(n))
    }
}

fn step(dec: &mut Decoder, kind: &str, items: &[Value]) -> StepKind {
    let schema = StepSchema::of(kind).unwrap();
    let path = FieldPath::root().key("steps").index(0);
    read_step(dec, schema, items, Loc(0), format!("`{kind}` step `s`"), &path, &[])
}

fn codes(dec: &Decoder) -> Vec<(&'static str, u32)> {
    dec.issues.iter().map(|i| (i.issue.code.as_str(), i.at.0)).collect()
}

#[test]
fn every_key_is_read_through_its_schema_row() {
    let mut b = Build::default();
    let items = [
        {
            let v = b.name("answer");
            b.entry("prompt_key", v)
        },
        {
            let v = b.v(Kind::Number(0.5));
            b.entry("top_p", v)
        },
        {
            let v = b.int(7);
            b.entry("seed", v)
        },
        {
            let v = b.v(Kind::Bool(true));
            b.entry("use_history", v)
        },
        {
            let v = b.name("end");
            b.entry("next", v)
        },
    ];
    let mut dec = Decoder::new(Dialect::Dsl);
    let StepKind::CallModel(call) = step(&mut dec, "call_model", &items) else { panic!() };
    assert!(dec.issues.is_empty(), "{:?}", dec.issues);
    assert_eq!((call.prompt_key.as_str(), call.next.as_str()), ("answer", "end"));
    assert_eq!((call.params.top_p, call.params.seed, call.use_history), (Some(0.5), Some(7), true));
    assert!(dec.locations.contains_key(&FieldPath::parse("steps[0].top_p")));
}

#[test]
fn every_problem_is_reported_once_and_poisons_only_its_own_path() {
    let mut b = Build::default();
    let top_k = b.v(Kind::Str("20".into()));
    let top_k_at = top_k.at;
    let items = [b.entry("top_k", top_k), {
        let v = b.name("x");
        b.entry("nxt", v)
    }];
    let mut dec = Decoder::new(Dialect::Dsl);
    let StepKind::SearchNodes(spec) = step(&mut dec, "search_nodes", &items) else { panic!() };
    // The wrong type under the value; the misspelt `next` once, not also as missing.
    assert_eq!(codes(&dec), [("YAML_UNKNOWN_KEY", items[1].at.0), ("YAML_WRONG_TYPE", top_k_at.0)]);
    assert!(dec.issues[0].issue.message.ends_with("did you mean `next`?"), "{}", dec.issues[0].issue.message);
    assert_eq!((spec.top_k, spec.next.as_str()), (1, END), "placeholders");
    assert!(dec.is_poisoned(&FieldPath::parse("steps[0].top_k")));
    assert!(dec.is_poisoned(&FieldPath::parse("steps[0].next")));
    assert!(!dec.is_poisoned(&FieldPath::parse("steps[0]")));
}

#[test]
fn a_wrong_type_that_says_its_value_gets_that_value_in_the_help() {
    use crate::codes::Code;
    let help = |kind: &str, key: &str, value: Kind| {
        let mut b = Build::default();
        let v = b.v(value);
        let items = [b.entry(key, v)];
        let mut dec = Decoder::new(Dialect::Dsl);
        step(&mut dec, kind, &items);
        let found = dec.issues.iter().find(|i| i.issue.code == Code::YamlWrongType).expect("a wrong type");
        found.issue.help.clone().unwrap_or_default()
    };
    assert_eq!(help("search_nodes", "top_k", Kind::Str("20".into())), "write `top_k: 20`");
    assert_eq!(help("search_nodes", "top_k", Kind::Str(" 2_000 ".into())), "write `top_k: 2000`");
    assert_eq!(help("search_nodes", "top_k", Kind::Number(3.0)), "write `top_k: 3`");
    assert_eq!(help("call_model", "use_history", Kind::Str("yes".into())), "write `use_history: true`");
    assert_eq!(help("call_model", "use_history", Kind::Str("Off".into())), "write `use_history: false`");
    // Nothing to read back: the placeholder, never a guess.
    assert_eq!(help("search_nodes", "top_k", Kind::Str("16k".into())), "write `top_k: <integer>`");
    assert_eq!(help("search_nodes", "top_k", Kind::Number(2.5)), "write `top_k: <integer>`");
    assert_eq!(help("call_model", "use_history", Kind::Str("maybe".into())), "write `use_history: true`");
}

#[test]
fn a_malformed_key_or_its_alias_is_not_also_missing() {
    let mut b = Build::default();
    // `max_tokens = 2_000` (the old spelling of `evidence_tokens`, written with `=`).
    let target = b.word("max_tokens");
    let value = b.int(2000);
    let assign = b.v(Kind::Assign { target, value: Box::new(value) });
    let items = [assign, {
        let v = b.name("end");
        b.entry("next", v)
    }];
    let mut dec = Decoder::new(Dialect::Dsl);
    step(&mut dec, "fetch_node_texts", &items);
    assert_eq!(codes(&dec), [("YAML_WRONG_TYPE", items[0].at.0)]);
    assert!(dec.is_poisoned(&FieldPath::parse("steps[0].evidence_tokens")));

    // The alias well written is read, and noted.
    let items = [
        {
            let v = b.int(300);
            b.entry("max_tokens", v)
        },
        {
            let v = b.name("end");
            b.entry("next", v)
        },
    ];
    let mut dec = Decoder::new(Dialect::Dsl);
    let StepKind::FetchNodeTexts(fetch) = step(&mut dec, "fetch_node_texts", &items) else { panic!() };
    assert_eq!((fetch.evidence_tokens, dec.issues.len(), dec.aliases.len()), (300, 0, 1));
    // Both spellings: one problem, at the alias.
    let items = [
        {
            let v = b.int(300);
            b.entry("max_tokens", v)
        },
        {
            let v = b.int(300);
            b.entry("evidence_tokens", v)
        },
        {
            let v = b.name("end");
            b.entry("next", v)
        },
    ];
    let mut dec = Decoder::new(Dialect::Dsl);
    step(&mut dec, "fetch_node_texts", &items);
    assert_eq!(codes(&dec), [("YAML_CONFLICTING_KEYS", items[0].at.0)]);
}

#[test]
fn the_dsl_forms_decode() {
    let mut b = Build::default();
    let copy = {
        let (target, source, transform) =
            (b.word("context_blocks"), b.word("last_model_response"), b.word("to_context_blocks"));
        b.v(Kind::Copy { target, source, transform: Some(transform) })
    };
    let assign = {
        let target = b.word("tries");
        let value = b.v(Kind::Null);
        b.v(Kind::Assign { target, value: Box::new(value) })
    };
    let rules = b.v(Kind::List(vec![copy, assign]));
    let items = [b.entry("rules", rules), {
        let v = b.name("end");
        b.entry("next", v)
    }];
    let mut dec = Decoder::new(Dialect::Dsl);
    let StepKind::SetVariables(set) = step(&mut dec, "set_variables", &items) else { panic!() };
    assert!(dec.issues.is_empty(), "{:?}", dec.issues);
    assert_eq!(set.rules[1].value, SetValueSpec::Value(serde_json::Value::Null));

    let arrow = {
        let from = b.word("done");
        let to = b.name("end");
        b.v(Kind::Arrow { from, to: Box::new(to) })
    };
    let outcomes = b.v(Kind::Map(vec![arrow]));
    let items = [b.entry("outcomes", outcomes)];
    let mut dec = Decoder::new(Dialect::Dsl);
    let StepKind::Custom(custom) = step(&mut dec, "custom", &items) else { panic!() };
    assert_eq!(custom.outcomes, [("done".to_owned(), "end".to_owned())]);

    // A quoted step id is a mistake in the DSL, and fine in YAML.
    let items = [{
        let v = b.v(Kind::Str("a".into()));
        b.entry("outcomes", v)
    }];
    let quoted = |dialect| {
        let mut b = Build::default();
        let to = b.v(Kind::Str("end".into()));
        let from = b.word("done");
        let arrow = b.v(Kind::Arrow { from, to: Box::new(to) });
        let outcomes = b.v(Kind::Map(vec![arrow]));
        let items = [b.entry("outcomes", outcomes)];
        let mut dec = Decoder::new(dialect);
        step(&mut dec, "custom", &items);
        dec.issues.len()
    };
    assert_eq!((quoted(Dialect::Dsl), quoted(Dialect::Yaml)), (1, 0));
    let mut dec = Decoder::new(Dialect::Dsl);
    step(&mut dec, "custom", &items);
    assert_eq!(codes(&dec), [("YAML_WRONG_TYPE", items[0].kind_value_at())]);
}

impl Value {
    /// The location of an entry's value.
    fn kind_value_at(&self) -> u32 {
        match &self.kind {
            Kind::Entry { value, .. } => value.at.0,
            _ => self.at.0,
        }
    }
}
