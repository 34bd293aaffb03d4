//! Diagnostics printed like rustc's: the message and code, the source line with a caret under
//! the value, and the help; in colour only where a person reads them (see [`Color`]).

use std::io::IsTerminal as _;
use std::sync::OnceLock;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use clap::ValueEnum;
use ctx::pipeline::yaml::YamlIssue;

/// When diagnostics are coloured (`--color`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Color {
    /// When standard error is a terminal and `NO_COLOR` is unset or empty.
    Auto,
    /// Always, even into a pipe or a file (and whatever `NO_COLOR` says).
    Always,
    /// Never.
    Never,
}

/// Whether this process colours its diagnostics, decided once by [`use_color`].
static STYLED: OnceLock<bool> = OnceLock::new();

/// Decides, for the whole process, whether diagnostics are coloured. A flag given on the command
/// line wins over the environment; left to `auto`, colour needs a terminal (escape codes in a
/// pipe or a CI log are noise) and no `NO_COLOR` (<https://no-color.org>: any non-empty value).
pub(crate) fn use_color(choice: Color) {
    let styled = match choice {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let _ = STYLED.set(styled);
}

fn renderer() -> Renderer {
    if *STYLED.get().unwrap_or(&false) { Renderer::styled() } else { Renderer::plain() }
}

/// Prints each issue like rustc: the message and code, the source line with a caret under the
/// value, and the help.
pub(crate) fn render(issues: &[YamlIssue]) {
    render_as(issues, Level::ERROR);
}

/// [`render`] at `level` (errors, or the warnings of `auto_clamp`).
pub(crate) fn render_as(issues: &[YamlIssue], level: Level<'_>) {
    let renderer = renderer();
    for issue in issues {
        let source = std::fs::read_to_string(&issue.file).unwrap_or_default();
        let path = issue.file.display().to_string();
        let title = level.clone().primary_title(issue.message.as_str()).id(issue.code.as_str());
        let group = match value_span(&source, issue.line, issue.column) {
            Some(span) => title.element(
                Snippet::source(source.as_str())
                    .line_start(1)
                    .path(path.as_str())
                    .fold(true)
                    .annotation(AnnotationKind::Primary.span(span)),
            ),
            // A problem of the whole file (it cannot be read) has no line: no `:0:0`.
            None if issue.line == 0 => title.element(Origin::path(path.as_str())),
            None => title.element(Origin::path(path.as_str()).line(issue.line).char_column(issue.column)),
        };
        let mut report = vec![group];
        if let Some(help) = &issue.help {
            report.push(Group::with_title(Level::HELP.secondary_title(help.as_str())));
        }
        eprintln!("{}\n", renderer.render(&report));
    }
}

/// The byte range of the value at 1-based `line`, `column`: up to the end of the line, less a
/// trailing comment and spaces. `None` when the position is not in `source`.
fn value_span(source: &str, line: usize, column: usize) -> Option<std::ops::Range<usize>> {
    let start_of_line: usize = source.split_inclusive('\n').take(line.checked_sub(1)?).map(str::len).sum();
    let text = source.get(start_of_line..)?.split('\n').next()?;
    let offset: usize = text.chars().take(column.checked_sub(1)?).map(char::len_utf8).sum();
    let rest = text.get(offset..)?;
    let value = rest.split(" #").next().unwrap_or(rest).trim_end();
    let len = value.len().max(1).min(rest.len().max(1));
    let start = start_of_line + offset;
    (start + len <= source.len() || rest.is_empty()).then(|| start..(start + len).min(source.len()))
}
