//! Which code a node holds: SQL, .NET (C#, Razor, MSBuild), .NET with embedded SQL, or neither.
//!
//! The one classifier `manage_context_budget` uses to match `compact_code` rules (the spec's
//! `code_classifier`). A file extension decides when it is conclusive (`.sql`, `.cs`, `.cshtml`,
//! `.csproj`, … and, just as firmly, `.py`, `.js`, `.md`, … which are never ours); otherwise the
//! content decides, line by line (see the `signals` module). C# is further checked for string literals
//! holding SQL statements (Dapper, ADO.NET, `FromSqlRaw`), which makes it
//! [`Language::DotnetWithSql`].

mod embedded;
mod signals;

pub use ctx_spec::lang::Language;
pub use embedded::looks_like_sql_statement;

/// Extensions that are SQL whatever they contain.
const SQL_EXTENSIONS: &[&str] = &["sql", "tsql", "pgsql", "psql", "ddl", "dml"];
/// Extensions of C# and Razor, which may embed SQL.
const CSHARP_EXTENSIONS: &[&str] = &["cs", "csx", "cshtml", "razor"];
/// Other .NET files.
const DOTNET_EXTENSIONS: &[&str] =
    &["csproj", "vbproj", "fsproj", "props", "targets", "sln", "slnx", "vb", "fs", "fsx", "fsi", "nuspec", "resx"];
/// Extensions that are never SQL or .NET, even when their content quotes some.
const OTHER_EXTENSIONS: &[&str] = &[
    "py",
    "pyi",
    "ipynb",
    "js",
    "mjs",
    "cjs",
    "jsx",
    "ts",
    "tsx",
    "java",
    "kt",
    "kts",
    "go",
    "rs",
    "rb",
    "php",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "m",
    "swift",
    "scala",
    "sh",
    "bash",
    "zsh",
    "ps1",
    "psm1",
    "bat",
    "cmd",
    "md",
    "markdown",
    "rst",
    "txt",
    "adoc",
    "html",
    "htm",
    "css",
    "scss",
    "less",
    "json",
    "yaml",
    "yml",
    "toml",
    "ini",
    "csv",
    "lua",
    "r",
    "pl",
    "dart",
    "ex",
    "exs",
    "erl",
    "hs",
    "clj",
    "vue",
    "svelte",
    "tf",
    "dockerfile",
];

/// Classifies `text`, using `path` (a file path or any source name) as a hint.
///
/// ```
/// use ctx::compact::{Language, classify};
/// assert_eq!(classify("SELECT Id FROM dbo.Invoices WHERE Status = 'PAID';", None), Language::Sql);
/// assert_eq!(classify("anything", Some("src/Billing/Invoice.cs")), Language::Dotnet);
/// assert_eq!(classify("import os\nprint(os.getcwd())", None), Language::Unknown);
/// ```
pub fn classify(text: &str, path: Option<&str>) -> Language {
    let with_sql = |text: &str| {
        if embedded::has_embedded_sql(text) { Language::DotnetWithSql } else { Language::Dotnet }
    };
    if let Some(ext) = path.and_then(extension) {
        let ext = ext.as_str();
        if SQL_EXTENSIONS.contains(&ext) {
            return Language::Sql;
        }
        if CSHARP_EXTENSIONS.contains(&ext) {
            return with_sql(text);
        }
        if DOTNET_EXTENSIONS.contains(&ext) {
            return Language::Dotnet;
        }
        if OTHER_EXTENSIONS.contains(&ext) {
            return Language::Unknown;
        }
    }
    match signals::judge(text) {
        signals::Verdict::Sql => Language::Sql,
        signals::Verdict::Dotnet => with_sql(text),
        signals::Verdict::Other => Language::Unknown,
    }
}

/// The lower-case extension of the file a path names, ignoring a `:line` or `#anchor` suffix
/// (`src/A.cs:12` → `cs`). `None` when the file name has no extension.
pub fn extension(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next()?;
    let (_, ext) = name.rsplit_once('.')?;
    let ext: String = ext.chars().take_while(char::is_ascii_alphanumeric).collect();
    (!ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod path_tests {
    use super::*;

    #[test]
    fn extensions() {
        assert_eq!(extension("a/b/C.Cs").as_deref(), Some("cs"));
        assert_eq!(extension("C:\\src\\x.sql:12").as_deref(), Some("sql"));
        assert_eq!(extension("README"), None);
        assert_eq!(extension("dir.v2/README"), None);
    }

    #[test]
    fn labels() {
        assert_eq!(Language::DotnetWithSql.label(), "dotnet");
        assert_eq!(Language::Unknown.label(), "unknown");
    }

    #[test]
    fn path_decides_when_conclusive() {
        assert_eq!(classify("SELECT 1 FROM t", Some("tools/export.py")), Language::Unknown);
        assert_eq!(classify("-- empty", Some("x.sql")), Language::Sql);
        assert_eq!(classify("<Project />", Some("A.csproj")), Language::Dotnet);
        assert_eq!(classify("var q = \"SELECT Id FROM dbo.T WHERE Id = @id\";", Some("A.cs")), Language::DotnetWithSql);
    }
}
