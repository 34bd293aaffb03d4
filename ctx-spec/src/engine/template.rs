//! `{input.question}` templates: parsed once, rendered by substitution.
//!
//! A template is parsed into literal text and variable references before anything is
//! substituted, so a value is inserted verbatim and is never scanned again: retrieved text that
//! contains `{x}` or `{}` reaches the model exactly as retrieved. `{{` and `}}` write a literal
//! brace.

use std::fmt;

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(VarRef),
}

/// A variable reference: its dotted path and where it is in the template.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VarRef {
    /// The dotted segments: `["input", "question"]`.
    pub path: Vec<String>,
    /// Byte offset of its `{` in the template.
    pub offset: usize,
}

impl VarRef {
    /// The dotted name, e.g. `input.question`.
    pub fn name(&self) -> String {
        self.path.join(".")
    }
}

/// What is wrong with a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyntaxErrorKind {
    /// A `{` without its `}`.
    UnclosedBrace,
    /// A `}` that closes nothing (write `}}` for a literal brace).
    UnmatchedClose,
    /// `{}`: a variable needs a name.
    EmptyName,
    /// A name with an empty segment or a character other than letters, digits, `_` and `-`.
    InvalidName,
}

/// One syntax error, with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TemplateSyntaxError {
    /// What is wrong.
    pub kind: SyntaxErrorKind,
    /// Byte offset in the template.
    pub offset: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The offending name, for [`SyntaxErrorKind::InvalidName`].
    pub name: Option<String>,
}

impl fmt::Display for TemplateSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, column) = (self.line, self.column);
        match (self.kind, &self.name) {
            (SyntaxErrorKind::UnclosedBrace, _) => write!(f, "unclosed `{{` at line {line}, column {column}"),
            (SyntaxErrorKind::UnmatchedClose, _) => {
                write!(f, "unmatched `}}` at line {line}, column {column} (write `}}}}` for a literal brace)")
            }
            (SyntaxErrorKind::EmptyName, _) => write!(f, "empty variable name `{{}}` at line {line}, column {column}"),
            (SyntaxErrorKind::InvalidName, name) => write!(
                f,
                "invalid variable name `{}` at line {line}, column {column} (use dotted names of letters, digits, \
                 `_` and `-`, like `input.question`)",
                name.as_deref().unwrap_or("")
            ),
        }
    }
}

fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

fn error(text: &str, kind: SyntaxErrorKind, offset: usize, name: Option<String>) -> TemplateSyntaxError {
    let (line, column) = position(text, offset);
    TemplateSyntaxError { kind, offset, line, column, name }
}

/// Whether `s` is one segment of a variable name (and so a valid input name): letters, digits,
/// `_` and `-`, at least one.
pub(super) fn valid_segment(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Template {
    /// Parses `text`, reporting every syntax error at once, in order.
    pub fn parse(text: &str) -> Result<Template, Vec<TemplateSyntaxError>> {
        let mut parts = Vec::new();
        let mut errors = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        let mut at = 0;
        while let Some(i) = rest.find(['{', '}']) {
            literal.push_str(&rest[..i]);
            let brace = &rest[i..];
            let offset = at + i;
            if brace.starts_with("{{") || brace.starts_with("}}") {
                literal.push_str(&brace[..1]);
                rest = &brace[2..];
                at = offset + 2;
                continue;
            }
            if let Some(after) = brace.strip_prefix('}') {
                errors.push(error(text, SyntaxErrorKind::UnmatchedClose, offset, None));
                rest = after;
                at = offset + 1;
                continue;
            }
            // An opening brace: the name runs to the next brace of either kind.
            let body = &brace[1..];
            match body.find(['{', '}']) {
                Some(j) if body[j..].starts_with('}') => {
                    let name = &body[..j];
                    if name.is_empty() {
                        errors.push(error(text, SyntaxErrorKind::EmptyName, offset, None));
                    } else if !name.split('.').all(valid_segment) {
                        errors.push(error(text, SyntaxErrorKind::InvalidName, offset, Some(name.to_owned())));
                    } else {
                        if !literal.is_empty() {
                            parts.push(Part::Literal(std::mem::take(&mut literal)));
                        }
                        let path = name.split('.').map(str::to_owned).collect();
                        parts.push(Part::Var(VarRef { path, offset }));
                    }
                    rest = &body[j + 1..];
                    at = offset + 1 + j + 1;
                }
                _ => {
                    // Either no closing brace at all or another `{` first: this one is unclosed.
                    errors.push(error(text, SyntaxErrorKind::UnclosedBrace, offset, None));
                    rest = body;
                    at = offset + 1;
                }
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        if errors.is_empty() { Ok(Template { parts }) } else { Err(errors) }
    }

    /// The variables, in order of appearance (repeats included).
    pub fn variables(&self) -> impl Iterator<Item = &VarRef> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var(v) => Some(v),
            Part::Literal(_) => None,
        })
    }

    /// Renders the template: literals as parsed, each variable replaced by what `value` returns
    /// for it, inserted verbatim.
    pub fn render<E>(&self, mut value: impl FnMut(&VarRef) -> Result<String, E>) -> Result<String, E> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Var(v) => out.push_str(&value(v)?),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(t: &str, f: impl Fn(&str) -> Option<&'static str>) -> Result<String, String> {
        Template::parse(t)
            .map_err(|e| format!("{e:?}"))?
            .render(|v| f(&v.name()).map(str::to_owned).ok_or_else(|| v.name()))
    }

    #[test]
    fn substitutes_and_unescapes() {
        let out = render("Q: {input.question} {{literal}} }}", |n| (n == "input.question").then_some("where?"));
        assert_eq!(out.unwrap(), "Q: where? {literal} }");
        assert_eq!(render("no vars", |_| None).unwrap(), "no vars");
        assert_eq!(render("", |_| None).unwrap(), "");
    }

    #[test]
    fn values_are_never_re_expanded() {
        let out = render("[{context.kb}]", |_| Some("code: fn f() { {x} } and {} and {{"));
        assert_eq!(out.unwrap(), "[code: fn f() { {x} } and {} and {{]");
    }

    #[test]
    fn missing_variable_is_reported_by_name() {
        assert_eq!(render("a {input.missing} b", |_| None), Err("input.missing".to_owned()));
    }

    #[test]
    fn every_syntax_error_is_reported_with_its_position() {
        let errors = Template::parse("a {} b\n c} {input..x} {bad name} {open").unwrap_err();
        let summary: Vec<_> = errors.iter().map(|e| (e.kind, e.offset, e.line, e.column)).collect();
        assert_eq!(
            summary,
            vec![
                (SyntaxErrorKind::EmptyName, 2, 1, 3),
                (SyntaxErrorKind::UnmatchedClose, 9, 2, 3),
                (SyntaxErrorKind::InvalidName, 11, 2, 5),
                (SyntaxErrorKind::InvalidName, 22, 2, 16),
                (SyntaxErrorKind::UnclosedBrace, 33, 2, 27),
            ]
        );
        assert_eq!(errors[2].name.as_deref(), Some("input..x"));
        assert!(errors[4].to_string().contains("unclosed `{` at line 2, column 27"), "{}", errors[4]);
    }

    #[test]
    fn an_opening_brace_inside_a_name_is_unclosed() {
        let errors = Template::parse("{a{b}").unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!((errors[0].kind, errors[0].offset), (SyntaxErrorKind::UnclosedBrace, 0));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let errors = Template::parse("é {").unwrap_err();
        assert_eq!((errors[0].offset, errors[0].column), (3, 3));
    }

    #[test]
    fn variables_lists_references_in_order() {
        let t = Template::parse("{input.a}{context.kb}{input.a}").unwrap();
        let names: Vec<_> = t.variables().map(VarRef::name).collect();
        assert_eq!(names, ["input.a", "context.kb", "input.a"]);
    }
}
