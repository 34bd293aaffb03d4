//! Content-based classification, for texts whose path does not decide.
//!
//! Every non-blank line votes for at most one family: SQL, C#/.NET, another programming language
//! (Python, JavaScript/TypeScript, Java — which must never be mistaken for ours), or prose. A vote
//! is *strong* when the line is close to unambiguous (`CREATE PROCEDURE`, `namespace X;`,
//! `def f(`), *weak* otherwise (`FROM t`, `public int X`). C# is judged on the text with its string
//! literals blanked out, so SQL inside a Dapper query votes for nothing; SQL is judged on the raw
//! text.

use crate::compact::{csharp, razor};

/// What the content looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Sql,
    Dotnet,
    Other,
}

/// Points of a strong vote; a weak vote is one point.
const STRONG: u32 = 3;

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    points: u32,
    strong: u32,
}

impl Tally {
    fn add(&mut self, strong: bool) {
        self.points += if strong { STRONG } else { 1 };
        self.strong += u32::from(strong);
    }
}

#[derive(Debug, Default)]
struct Votes {
    sql: Tally,
    dotnet: Tally,
    other: Tally,
    prose: Tally,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Sql,
    Dotnet,
    Other,
    Prose,
}

pub(super) fn judge(text: &str) -> Verdict {
    let masked = mask_strings(text);
    let code = votes(&masked);
    let raw_sql = votes(text).sql;
    let others = code.other.points;
    if code.dotnet.strong >= 1
        && code.dotnet.points > 2 * others
        && code.dotnet.points >= code.sql.points
        && code.dotnet.points >= code.prose.points
    {
        return Verdict::Dotnet;
    }
    if raw_sql.strong >= 1 && raw_sql.points > 2 * (others + code.dotnet.points) && raw_sql.points >= code.prose.points
    {
        return Verdict::Sql;
    }
    Verdict::Other
}

/// `text` with each C# string literal replaced by `""`.
fn mask_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for range in csharp::lex(text).strings {
        if let (Some(before), true) = (text.get(at..range.start), range.start >= at) {
            out.push_str(before);
            out.push_str("\"\"");
            at = range.end;
        }
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

fn votes(text: &str) -> Votes {
    let mut v = Votes::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some((family, strong)) = vote(line) {
            match family {
                Family::Sql => v.sql.add(strong),
                Family::Dotnet => v.dotnet.add(strong),
                Family::Other => v.other.add(strong),
                Family::Prose => v.prose.add(strong),
            }
        }
    }
    v
}

/// Whether `line` (lower-cased) starts with the words `kw`, followed by a non-identifier char.
fn starts(line: &str, kw: &str) -> bool {
    line.starts_with(kw) && line[kw.len()..].chars().next().is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
}

const SQL_TYPES: &[&str] = &[
    "int",
    "bigint",
    "smallint",
    "tinyint",
    "bit",
    "decimal",
    "numeric",
    "money",
    "smallmoney",
    "float",
    "real",
    "date",
    "datetime",
    "datetime2",
    "datetimeoffset",
    "smalldatetime",
    "time",
    "char",
    "varchar",
    "nchar",
    "nvarchar",
    "text",
    "ntext",
    "binary",
    "varbinary",
    "uniqueidentifier",
    "rowversion",
    "timestamp",
    "xml",
    "integer",
    "serial",
    "bigserial",
    "boolean",
    "uuid",
    "jsonb",
    "timestamptz",
    "sysname",
];

const SQL_OBJECTS: &[&str] = &[
    "table",
    "view",
    "procedure",
    "proc",
    "function",
    "trigger",
    "index",
    "schema",
    "type",
    "sequence",
    "database",
    "synonym",
    "login",
    "user",
    "role",
];

fn vote(line: &str) -> Option<(Family, bool)> {
    let lower = line.to_ascii_lowercase();
    let l = lower.as_str();
    if l.starts_with("--") {
        return Some((Family::Sql, false));
    }
    // `///` is C#'s doc comment, but also TypeScript's directive and the doc comment of
    // Visual Studio's JavaScript IntelliSense files: a hint, never proof.
    if l.starts_with("/// <reference") || l.starts_with("///<reference") {
        return Some((Family::Other, true));
    }
    if l.starts_with("///") {
        return Some((Family::Dotnet, false));
    }
    // A `//` comment is prose in any C-like language: it says nothing about which one.
    if l.starts_with("//") {
        return None;
    }
    // Before C#'s `var x = …;`: `var f = function (a) {` is JavaScript.
    if l.contains("function (") || l.contains("function(") {
        return Some((Family::Other, true));
    }
    // Before the keyword checks: "Select the invoices from last month." is a sentence.
    if let Some(v) = prose_vote(line, l) {
        return Some(v);
    }
    if let Some(v) = sql_vote(line, l) {
        return Some(v);
    }
    if let Some(v) = dotnet_vote(line, l) {
        return Some(v);
    }
    if let Some(v) = other_vote(line, l) {
        return Some(v);
    }
    prose_vote(line, l)
}

fn sql_vote(line: &str, l: &str) -> Option<(Family, bool)> {
    let sql = |strong| Some((Family::Sql, strong));
    let words: Vec<&str> = l.split_whitespace().take(6).collect();
    let w = |k: usize| words.get(k).copied().unwrap_or("");
    if l.starts_with("--") {
        return sql(false);
    }
    if matches!(w(0), "create" | "alter" | "drop") {
        let mut k = 1;
        while matches!(w(k), "or" | "alter" | "replace" | "unique" | "clustered" | "nonclustered" | "if" | "exists") {
            k += 1;
        }
        if SQL_OBJECTS.contains(&w(k).trim_end_matches(';')) {
            return sql(true);
        }
        return None;
    }
    let strong_starts = [
        "insert into",
        "delete from",
        "merge into",
        "truncate table",
        "declare @",
        "set nocount",
        "set xact_abort",
        "set ansi_",
        "set quoted_identifier",
        "set @",
        "begin tran",
        "commit tran",
        "rollback tran",
        "begin try",
        "end try",
        "begin catch",
        "end catch",
        "raiserror",
        "if object_id",
        "if exists (select",
        "if not exists (select",
        "print n'",
        "print '",
        "print @",
        "while @@",
        "fetch next from",
        "deallocate ",
        "returns ",
        "exec dbo.",
        "execute dbo.",
        "exec sp_",
        "group by ",
        "order by ",
        "inner join ",
        "left join ",
        "left outer join ",
        "cross apply ",
        "outer apply ",
        "primary key",
        "foreign key",
        "constraint ",
        "references ",
    ];
    if strong_starts.iter().any(|s| l.starts_with(s)) {
        return sql(true);
    }
    if l == "go" || l == "go;" || (w(0) == "go" && words.len() == 2 && w(1).chars().all(|c| c.is_ascii_digit())) {
        return sql(true);
    }
    if starts(l, "select") {
        // `SELECT a, b FROM t` on one line, or a column list opening a multi-line statement.
        let strong = l.contains(" from ") || line.starts_with("SELECT") || l.ends_with(',');
        return sql(strong);
    }
    if starts(l, "update") && (l.contains(" set ") || words.len() <= 3) && !l.contains('(') {
        return sql(false);
    }
    let weak_starts = [
        "from ",
        "where ",
        "join ",
        "right join ",
        "full join ",
        "cross join ",
        "having ",
        "union",
        "values",
        "and ",
        "or ",
        "on ",
        "set ",
        "when ",
        "then ",
        "else ",
        "end;",
        "case",
        "begin",
        "as",
        "with (",
        "exec ",
        "execute ",
        "with schemabinding",
        "open ",
        "close ",
        "into ",
        "output ",
        "top (",
    ];
    let sqlish_punct = l.contains('@') || l.contains('=') || l.contains('.') || l.contains('(') || l.ends_with(',');
    if weak_starts.iter().any(|s| l.starts_with(s) || l == s.trim_end()) && (sqlish_punct || l.len() <= 12) {
        return sql(false);
    }
    // Column or parameter definitions: `Amount DECIMAL(19, 2) NOT NULL,`, `@InvoiceId INT,`.
    let ty = w(1).split(['(', ',']).next().unwrap_or("");
    let name_ok =
        w(0).trim_start_matches('@').trim_matches(['[', ']']).chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !w(0).is_empty()
        && name_ok
        && SQL_TYPES.contains(&ty)
        && (line.contains(',') || l.contains("null") || w(0).starts_with('@'))
    {
        return sql(w(0).starts_with('@')
            || line.split_whitespace().nth(1).is_some_and(|t| t.chars().any(|c| c.is_ascii_uppercase())));
    }
    None
}

fn dotnet_vote(line: &str, l: &str) -> Option<(Family, bool)> {
    let dn = |strong| Some((Family::Dotnet, strong));
    if starts(l, "#region") || starts(l, "#endregion") || starts(l, "#nullable") || l.starts_with("#pragma warning") {
        return dn(true);
    }
    let using = starts(l, "using") || l.starts_with("global using ");
    if (using && line.ends_with(';') && !l.contains('(') && !l.contains(" = new")) || starts(l, "namespace") {
        return dn(true);
    }
    // Assembly attributes: the whole of an `AssemblyInfo.cs`.
    if l.starts_with("[assembly:") || l.starts_with("[module:") {
        return dn(true);
    }
    if razor::is_razor_line(line) || l.starts_with("@*") || line.contains("asp-") {
        return dn(true);
    }
    let msbuild =
        ["<project sdk", "<packagereference", "<projectreference", "<targetframework", "<propertygroup", "<itemgroup"];
    if msbuild.iter().any(|m| l.starts_with(m)) {
        return dn(true);
    }
    let strong_markers = [
        "{ get; set; }",
        "{ get; }",
        "{ get; init; }",
        " get; ",
        "async task",
        "task<",
        "nameof(",
        "string.empty",
        "console.write",
        ".tolistasync(",
        "iactionresult",
        "ienumerable<",
        "readonly record struct",
        "sealed class",
        "sealed record",
        "public record",
        "override ",
        "[httpget",
        "[httppost",
        "[fact]",
        "[theory]",
        "[required]",
        "dbcontext",
        "cancellationtoken",
    ];
    if strong_markers.iter().any(|m| l.contains(m)) {
        return dn(true);
    }
    // PascalCase .NET APIs (case matters: Java streams have `.toList()`).
    let apis = [
        ".ToList()",
        ".ToListAsync(",
        ".FirstOrDefault",
        ".SingleOrDefault",
        ".FromSqlRaw(",
        ".FromSqlInterpolated(",
        ".ExecuteSqlRaw",
        ".SqlQuery<",
        ".QueryAsync<",
        ".Query<",
        ".QueryFirstOrDefault",
        ".ExecuteAsync(",
        ".ExecuteScalar",
        "new SqlConnection(",
        "new SqlCommand(",
        "new SqlParameter(",
        ".AsNoTracking()",
        ".Include(",
        "Console.WriteLine(",
        "string.IsNullOrEmpty(",
        // ASP.NET Core's hosting, the whole of a top-level-statement `Program.cs`.
        "WebApplication.Create",
        "Host.CreateDefaultBuilder(",
        "Host.CreateApplicationBuilder(",
        ".Services.Add",
        "app.Use",
        "app.Map",
        "app.Run(",
    ];
    if apis.iter().any(|a| line.contains(a)) {
        return dn(true);
    }
    let modifiers = ["public ", "private ", "protected ", "internal "];
    if modifiers.iter().any(|m| l.starts_with(m)) {
        return dn(false);
    }
    let weak_markers =
        ["var ", "await ", " => ", "foreach (", "catch (", "new list<", ".where(", ".select(", "?? ", "?."];
    if weak_markers.iter().any(|m| l.contains(m))
        && (line.ends_with(';') || line.ends_with('{') || line.ends_with(')') || line.ends_with("=>"))
    {
        return dn(false);
    }
    // An attribute line: `[Route("invoices")]`, `[Timestamp]`.
    if line.starts_with('[')
        && line.ends_with(']')
        && line[1..].starts_with(|c: char| c.is_ascii_uppercase())
        && !line.contains(' ')
    {
        return dn(false);
    }
    None
}

fn other_vote(line: &str, l: &str) -> Option<(Family, bool)> {
    let other = |strong| Some((Family::Other, strong));
    let strong_starts = [
        "def ",
        "elif ",
        "from __future__",
        "if __name__",
        "function ",
        "async function",
        "module.exports",
        "export default",
        "export function",
        "export const",
        "export class",
        "package ",
        "import java",
        "import javax",
        "@override",
        "public static void main",
        "console.log(",
        "#!/usr/bin",
    ];
    if strong_starts.iter().any(|s| l.starts_with(s)) {
        return other(true);
    }
    if (starts(l, "from") && l.contains(" import "))
        || (starts(l, "import") && !line.ends_with(';') && !l.contains('('))
    {
        return other(true);
    }
    if (starts(l, "import") && (l.contains(" from '") || l.contains(" from \""))) || l.contains("require(") {
        return other(true);
    }
    if l.contains("self.")
        || l.contains("system.out.")
        || l.contains("document.")
        || l.contains(" === ")
        || l.contains(" !== ")
    {
        return other(true);
    }
    let python_block = ["if ", "for ", "while ", "with ", "try", "except", "else", "class ", "finally"];
    if line.ends_with(':') && python_block.iter().any(|s| l.starts_with(s)) {
        return other(false);
    }
    if starts(l, "const")
        || starts(l, "let")
        || l.starts_with("return {")
        || l.starts_with("});")
        || l.starts_with("})")
    {
        return other(false);
    }
    if l.starts_with("# ") && !l.contains('{') && line.split_whitespace().count() <= 3 {
        // A short `# heading` or a Python/shell comment: not ours either way.
        return other(false);
    }
    None
}

fn prose_vote(line: &str, l: &str) -> Option<(Family, bool)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() < 5 {
        return None;
    }
    // Code punctuation, or a dot inside a word (`c.Id`, `System.Linq`), means code.
    let b = line.as_bytes();
    let dotted = (1..b.len().saturating_sub(1))
        .any(|k| b[k] == b'.' && b[k - 1].is_ascii_alphanumeric() && b[k + 1].is_ascii_alphanumeric());
    if dotted || line.contains(|c: char| "=(){}[]<>;@*_$\\".contains(c)) {
        return None;
    }
    const STOP: &[&str] = &[
        "the", "a", "an", "is", "are", "was", "of", "to", "and", "in", "it", "that", "this", "for", "with", "be", "by",
        "we", "you", "our", "not", "can", "when", "which", "its", "has", "have", "but", "if", "so", "at", "or", "they",
        "before", "after", "then", "there", "their", "what", "how", "why", "must", "should", "will",
    ];
    let stops =
        l.split_whitespace().filter(|w| STOP.contains(&w.trim_matches(|c: char| !c.is_ascii_alphabetic()))).count();
    (stops * 5 >= words.len()).then_some((Family::Prose, stops * 3 >= words.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn votes_by_line() {
        assert_eq!(vote("CREATE OR ALTER PROCEDURE dbo.usp_X"), Some((Family::Sql, true)));
        assert_eq!(vote("FROM   dbo.Invoices AS i"), Some((Family::Sql, false)));
        assert_eq!(vote("Amount DECIMAL(19, 2) NOT NULL,"), Some((Family::Sql, true)));
        assert_eq!(vote("namespace Invoicing.Domain;"), Some((Family::Dotnet, true)));
        assert_eq!(vote("public decimal Rate { get; set; }"), Some((Family::Dotnet, true)));
        assert_eq!(vote("def month_bounds(month: str) -> tuple[date, date]:"), Some((Family::Other, true)));
        assert_eq!(vote("import { attach } from './editor.js';"), Some((Family::Other, true)));
        assert_eq!(vote("The total is the sum of the net amounts plus the tax."), Some((Family::Prose, true)));
        assert_eq!(vote("}"), None);
    }

    #[test]
    fn masking_hides_sql_in_csharp_strings() {
        let masked = mask_strings("var q = @\"\nSELECT Id\nFROM dbo.T\";\nvar y = 1;");
        assert_eq!(masked, "var q = \"\";\nvar y = 1;");
    }
}
