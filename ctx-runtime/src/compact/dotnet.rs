//! .NET compaction: C# sources, Razor views and MSBuild project files, each by its own rules.

use std::borrow::Cow;

use super::compacted::{Compacted, guard_tokens};
use super::emit::emit;
use super::{csharp, msbuild, razor};
use crate::classify::extension;
use crate::tokens::TokenCounter;
use crate::tokens::TokenError;

/// Which .NET syntax a text is written in; it decides what compaction may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DotnetSyntax {
    /// C# (`.cs`, `.csx`): comments, `#region` lines and insignificant whitespace go.
    CSharp,
    /// Razor (`.cshtml`, `.razor`): only Razor comments go.
    Razor,
    /// MSBuild or other XML (`.csproj`, `.props`, `.targets`, `.config`, …): only XML comments go.
    Xml,
    /// VB.NET, F#, solution files: left unchanged (their comment syntax is not C#'s).
    Other,
}

impl DotnetSyntax {
    /// The syntax of a .NET text: from its file extension when it has a known one, else from
    /// its content (Razor directives, else markup when it starts with `<`, else C#).
    pub fn detect(text: &str, path: Option<&str>) -> Self {
        match path.and_then(extension).as_deref() {
            Some("cs" | "csx") => return DotnetSyntax::CSharp,
            Some("cshtml" | "razor") => return DotnetSyntax::Razor,
            Some(
                "csproj" | "vbproj" | "fsproj" | "proj" | "props" | "targets" | "config" | "resx" | "xml" | "nuspec",
            ) => {
                return DotnetSyntax::Xml;
            }
            Some("vb" | "fs" | "fsx" | "fsi" | "sln" | "slnx") => return DotnetSyntax::Other,
            _ => {}
        }
        if text.lines().any(razor::is_razor_line) {
            DotnetSyntax::Razor
        } else if text.trim_start().starts_with('<') {
            // C# never starts with `<`; markup must not meet the C# lexer (`http://` is no comment).
            DotnetSyntax::Xml
        } else {
            DotnetSyntax::CSharp
        }
    }
}

/// `text` compacted by the rules of `syntax`, or `text` itself (borrowed) when nothing changes.
///
/// ```
/// use ctx::compact::dotnet::{DotnetSyntax, strip};
/// let cs = "/// <summary>Totals.</summary>\npublic decimal Total  => Lines.Sum(l => l.Net); // cached\n#region x\n";
/// assert_eq!(strip(cs, DotnetSyntax::CSharp), "public decimal Total => Lines.Sum(l => l.Net);");
/// let sql_in_string = "var q = @\"SELECT Id  -- kept\n    FROM T\";  // dropped";
/// assert_eq!(strip(sql_in_string, DotnetSyntax::CSharp), "var q = @\"SELECT Id  -- kept\n    FROM T\";");
/// ```
pub fn strip(text: &str, syntax: DotnetSyntax) -> Cow<'_, str> {
    match syntax {
        DotnetSyntax::CSharp => {
            let out = emit(&csharp::lex(text).pieces.finish(), text.len());
            if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) }
        }
        DotnetSyntax::Razor => razor::strip(text),
        DotnetSyntax::Xml => msbuild::strip(text),
        DotnetSyntax::Other => Cow::Borrowed(text),
    }
}

/// [`strip`] with the detected syntax, then the token guard: the result never has more tokens
/// than `text`.
///
/// Without a conclusive extension the syntax is detected from the content; a result that would
/// be detected as another syntax (a Razor directive only inside a removed comment) is refused, so
/// that compacting twice gives what compacting once gave.
pub fn compact(text: &str, path: Option<&str>, counter: &TokenCounter) -> Result<Compacted, TokenError> {
    guard_tokens(text, reduce(text, path), counter)
}

/// [`strip`] with the detected syntax, refused when the result would be detected as another.
pub(crate) fn reduce<'t>(text: &'t str, path: Option<&str>) -> Cow<'t, str> {
    let syntax = DotnetSyntax::detect(text, path);
    match strip(text, syntax) {
        Cow::Owned(out) if DotnetSyntax::detect(&out, path) != syntax => Cow::Borrowed(text),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_from_path_then_content() {
        assert_eq!(DotnetSyntax::detect("", Some("src/A.cs")), DotnetSyntax::CSharp);
        assert_eq!(DotnetSyntax::detect("", Some("Views/A.CSHTML")), DotnetSyntax::Razor);
        assert_eq!(DotnetSyntax::detect("", Some("A.csproj")), DotnetSyntax::Xml);
        assert_eq!(DotnetSyntax::detect("' comment", Some("A.vb")), DotnetSyntax::Other);
        assert_eq!(DotnetSyntax::detect("<Project Sdk=\"x\">", None), DotnetSyntax::Xml);
        assert_eq!(DotnetSyntax::detect("@model X\n<div></div>", None), DotnetSyntax::Razor);
        assert_eq!(DotnetSyntax::detect("public class A {}", None), DotnetSyntax::CSharp);
        assert_eq!(DotnetSyntax::detect("<!-- c -->\n<Project>", None), DotnetSyntax::Xml);
        // Markup-first Razor, which the classifier calls .NET from the same lines: never the
        // XML or C# rules (`<!-- -->` reaches the browser; `http://` is no comment).
        let layout = "<!DOCTYPE html>\n<!-- shown -->\n<body>\n    @RenderBody()\n</body>";
        assert_eq!(DotnetSyntax::detect(layout, None), DotnetSyntax::Razor);
        let component = "<h3>Counter</h3>\n<p>@count</p>\n@code {\n    int count;\n}";
        assert_eq!(DotnetSyntax::detect(component, None), DotnetSyntax::Razor);
        assert_eq!(
            DotnetSyntax::detect("@addTagHelper *, Microsoft.AspNetCore.Mvc.TagHelpers", None),
            DotnetSyntax::Razor
        );
    }

    #[test]
    fn vb_is_never_touched() {
        let vb = "' a VB comment\nDim  x = 1 ' another";
        assert_eq!(strip(vb, DotnetSyntax::Other), vb);
    }
}
