//! Encodings and models: which BPE a model uses and how large its window is.
//!
//! Both answers come from ctx's own table of OpenAI chat models ([`ModelInfo::known`]); see
//! [`ModelInfo::lookup`] for which names it knows. With the `__tiktoken` feature a test checks every
//! entry against tiktoken-rs.

use std::fmt;
use std::str::FromStr;

use crate::TokenError;
use crate::names::did_you_mean;

/// What the model table is called in messages.
pub const MODEL_TABLE: &str = "ctx's OpenAI model table";

/// A byte-pair encoding ctx can count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-3.5 / GPT-4 encoding.
    Cl100kBase,
    /// GPT-4o / o-series / GPT-4.1 / GPT-5 encoding.
    O200kBase,
}

impl Encoding {
    /// All encodings, in a stable order.
    pub const ALL: [Encoding; 2] = [Encoding::Cl100kBase, Encoding::O200kBase];

    /// The encoding's canonical name (`cl100k_base`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
        }
    }

    /// The encoding a model uses, from [`MODEL_TABLE`] (see [`ModelInfo::lookup`] for which names
    /// are known).
    pub fn for_model(model: &str) -> Result<Encoding, TokenError> {
        Ok(resolve(model)?.encoding)
    }

    /// The pieces this encoding's pre-tokenizer cuts `text` into, in order (they concatenate to
    /// `text`). Byte-pair merges happen inside each piece, so a text's count is the sum of its
    /// pieces' counts, and a piece boundary is a place where a text can be cut without changing
    /// the count of either side.
    ///
    /// ```
    /// use ctx_tokens::Encoding;
    ///
    /// let pieces: Vec<&str> = Encoding::O200kBase.pieces("It's 2024:  done!").collect();
    /// assert_eq!(pieces, ["It's", " ", "202", "4", ":", " ", " done", "!"]);
    /// ```
    pub fn pieces(self, text: &str) -> impl Iterator<Item = &str> {
        super::pretokenize::Pieces::new(self.into(), text)
    }
}

impl From<Encoding> for super::pretokenize::Pattern {
    fn from(encoding: Encoding) -> Self {
        match encoding {
            Encoding::Cl100kBase => super::pretokenize::Pattern::Cl100k,
            Encoding::O200kBase => super::pretokenize::Pattern::O200k,
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encoding {
    type Err = TokenError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            "o200k_base" => Ok(Encoding::O200kBase),
            _ => Err(TokenError::UnknownEncoding { name: s.to_owned(), expected: "cl100k_base, o200k_base" }),
        }
    }
}

/// Which dated snapshot names a table entry accepts after its name and a `-`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Snapshots {
    /// None: the name is an alias with no snapshots (`chatgpt-4o-latest`).
    Undated,
    /// Any `YYYY-MM-DD` (`gpt-4o-2024-08-06`), the style since GPT-4 Turbo: new snapshots keep
    /// coming, and each has its family's encoding and window.
    Iso,
    /// Exactly these `MMDD` snapshots (`gpt-4-0613`): the first GPT-3.5 and GPT-4 families, which
    /// are closed. A pattern would accept `gpt-4-0125`, which is no model (`gpt-4-0125-preview` is,
    /// with another window).
    MonthDay(&'static [&'static str]),
}

/// One entry of the model table.
struct Known {
    name: &'static str,
    encoding: Encoding,
    /// `None` for the embedding models, whose encoding is known but which take no chat prompt.
    context_window: Option<usize>,
    snapshots: Snapshots,
}

const fn known(name: &'static str, encoding: Encoding, context_window: usize, snapshots: Snapshots) -> Known {
    Known { name, encoding, context_window: Some(context_window), snapshots }
}

/// A model whose encoding is known and whose window is not: it needs an explicit window.
const fn encoding_only(name: &'static str, encoding: Encoding) -> Known {
    Known { name, encoding, context_window: None, snapshots: Snapshots::Undated }
}

use Encoding::{Cl100kBase as CL100K, O200kBase as O200K};
use Snapshots::{Iso, MonthDay, Undated};

/// OpenAI's chat (and embedding) models: encoding and context window (prompt + completion), as tiktoken-rs
/// 0.12.1 reports them for the exact name (checked by a test under the `__tiktoken` feature), except
/// `gpt-4-turbo`, for which tiktoken-rs falls back to `gpt-4`'s 8,192 while its snapshots have
/// 128,000.
const TABLE: &[Known] = &[
    known("gpt-3.5-turbo", CL100K, 16_385, MonthDay(&["0301", "0613", "1106", "0125"])),
    known("gpt-3.5-turbo-16k", CL100K, 16_385, MonthDay(&["0613"])),
    known("gpt-35-turbo", CL100K, 16_385, MonthDay(&["0301", "0613", "1106", "0125"])),
    known("gpt-4", CL100K, 8_192, MonthDay(&["0314", "0613"])),
    known("gpt-4-32k", CL100K, 32_768, MonthDay(&["0314", "0613"])),
    known("gpt-4-turbo", CL100K, 128_000, Iso),
    known("gpt-4-turbo-preview", CL100K, 128_000, Undated),
    known("gpt-4-1106-preview", CL100K, 128_000, Undated),
    known("gpt-4-0125-preview", CL100K, 128_000, Undated),
    known("gpt-4o", O200K, 128_000, Iso),
    known("gpt-4o-mini", O200K, 128_000, Iso),
    known("chatgpt-4o-latest", O200K, 128_000, Undated),
    known("gpt-4.1", O200K, 1_047_576, Iso),
    known("gpt-4.1-mini", O200K, 1_047_576, Iso),
    known("gpt-4.1-nano", O200K, 1_047_576, Iso),
    known("gpt-4.5-preview", O200K, 128_000, Iso),
    known("o1", O200K, 200_000, Iso),
    known("o1-pro", O200K, 200_000, Iso),
    known("o1-mini", O200K, 128_000, Iso),
    known("o1-preview", O200K, 128_000, Iso),
    known("o3", O200K, 200_000, Iso),
    known("o3-pro", O200K, 200_000, Iso),
    known("o3-mini", O200K, 200_000, Iso),
    known("o4-mini", O200K, 200_000, Iso),
    known("codex-mini-latest", O200K, 200_000, Undated),
    known("gpt-5", O200K, 400_000, Iso),
    known("gpt-5-mini", O200K, 400_000, Iso),
    known("gpt-5-nano", O200K, 400_000, Iso),
    known("gpt-5-pro", O200K, 400_000, Iso),
    known("gpt-5-codex", O200K, 400_000, Undated),
    known("gpt-5-chat-latest", O200K, 400_000, Undated),
    known("gpt-5.1", O200K, 400_000, Iso),
    known("gpt-5.1-codex", O200K, 400_000, Undated),
    known("gpt-5.1-chat-latest", O200K, 400_000, Undated),
    known("gpt-5.2", O200K, 400_000, Iso),
    known("gpt-5.4", O200K, 1_050_000, Iso),
    known("gpt-5.4-mini", O200K, 400_000, Iso),
    known("gpt-5.4-nano", O200K, 400_000, Iso),
    known("gpt-oss-20b", O200K, 131_072, Undated),
    known("gpt-oss-120b", O200K, 131_072, Undated),
    known("text-embedding-ada-002", CL100K, 8_192, Undated),
    encoding_only("text-embedding-3-small", CL100K),
    encoding_only("text-embedding-3-large", CL100K),
];

/// Whether `digits` are exactly `N` ASCII digits forming a number in `range`.
fn number_in<const N: usize>(digits: &str, range: std::ops::RangeInclusive<u32>) -> bool {
    digits.len() == N && digits.bytes().all(|b| b.is_ascii_digit()) && digits.parse().is_ok_and(|n| range.contains(&n))
}

/// Whether `suffix` (after the `-` that follows the name) is a snapshot date in `style`.
fn is_snapshot(suffix: &str, style: Snapshots) -> bool {
    match style {
        Snapshots::Undated => false,
        Snapshots::MonthDay(dates) => dates.contains(&suffix),
        Snapshots::Iso => {
            let mut parts = suffix.split('-');
            match (parts.next(), parts.next(), parts.next(), parts.next()) {
                (Some(year), Some(month), Some(day), None) => {
                    number_in::<4>(year, 2020..=2099) && number_in::<2>(month, 1..=12) && number_in::<2>(day, 1..=31)
                }
                _ => false,
            }
        }
    }
}

/// The table entry for `model`: an exact name, a dated snapshot of one, or a fine-tune of either.
fn entry(model: &str) -> Option<&'static Known> {
    if let Some(rest) = model.strip_prefix("ft:") {
        let base = rest.split(':').next().unwrap_or(rest);
        return entry(base);
    }
    TABLE.iter().find(|k| {
        model == k.name
            || model
                .strip_prefix(k.name)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|date| is_snapshot(date, k.snapshots))
    })
}

/// The table entry for `model`, or the unknown-model error with the closest name.
fn resolve(model: &str) -> Result<&'static Known, TokenError> {
    entry(model).ok_or_else(|| {
        let base = model.strip_prefix("ft:").map_or(model, |rest| rest.split(':').next().unwrap_or(rest));
        // A known name followed by something that is not a snapshot (`gpt-4o-typo`) suggests
        // that name; otherwise the closest-looking one.
        let extended = TABLE
            .iter()
            .filter(|k| base.strip_prefix(k.name).is_some_and(|rest| rest.starts_with('-')))
            .max_by_key(|k| k.name.len())
            .map(|k| k.name);
        let suggestion = extended.or_else(|| did_you_mean(base, TABLE.iter().map(|k| k.name)));
        TokenError::UnknownModel { model: model.to_owned(), suggestion: suggestion.map(str::to_owned) }
    })
}

/// What [`MODEL_TABLE`] knows about a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The model name as given.
    pub model: String,
    /// Its encoding.
    pub encoding: Encoding,
    /// Its context window (prompt + completion), in tokens.
    pub context_window: usize,
}

impl ModelInfo {
    /// Looks a model up in [`MODEL_TABLE`].
    ///
    /// A name is known when it is in the table exactly ([`ModelInfo::known`]); or is a table name
    /// followed by a dated snapshot in the style of its family: any `-YYYY-MM-DD` for the current
    /// families (`gpt-4o-2024-08-06`), only the published `-MMDD` snapshots for the first GPT-3.5
    /// and GPT-4 models (`gpt-4-0613`); or is a fine-tune of such a name
    /// (`ft:gpt-4o-mini-2024-07-18:org::id`). Anything else, including a name that merely starts
    /// like a known one (`gpt-4o-typo`), is [`TokenError::UnknownModel`], with the closest known
    /// name when one is close: ctx never guesses a window.
    pub fn lookup(model: &str) -> Result<ModelInfo, TokenError> {
        let known = resolve(model)?;
        // An embedding model's encoding is known, its window is not: it needs an explicit one.
        let context_window = known
            .context_window
            .ok_or_else(|| TokenError::UnknownModel { model: model.to_owned(), suggestion: None })?;
        Ok(ModelInfo { model: model.to_owned(), encoding: known.encoding, context_window })
    }

    /// Looks a model up, but uses `window` when given (for fine-tunes, proxies and local models
    /// whose window differs from the table's). The encoding must still be known.
    pub fn lookup_with_window(model: &str, window: Option<usize>) -> Result<ModelInfo, TokenError> {
        match window {
            Some(context_window) => {
                Ok(ModelInfo { model: model.to_owned(), encoding: Encoding::for_model(model)?, context_window })
            }
            None => Self::lookup(model),
        }
    }

    /// Every model of the table with a window, under its exact name (dated snapshots are not
    /// listed).
    pub fn known() -> impl Iterator<Item = ModelInfo> {
        TABLE.iter().filter_map(|k| {
            Some(ModelInfo { model: k.name.to_owned(), encoding: k.encoding, context_window: k.context_window? })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_resolve_from_the_table() {
        let m = ModelInfo::lookup("gpt-4o").unwrap();
        assert_eq!(m.encoding, Encoding::O200kBase);
        assert_eq!(m.context_window, 128_000);
        let m = ModelInfo::lookup("gpt-4").unwrap();
        assert_eq!((m.encoding, m.context_window), (Encoding::Cl100kBase, 8192));
        assert_eq!(ModelInfo::lookup("gpt-3.5-turbo").unwrap().encoding, Encoding::Cl100kBase);
        assert_eq!(ModelInfo::lookup("gpt-4.1-mini").unwrap().context_window, 1_047_576);
        assert!(ModelInfo::known().any(|m| m.model == "gpt-5"));
        // An embedding model: the encoding is known, the window must be given.
        assert_eq!(Encoding::for_model("text-embedding-3-small"), Ok(Encoding::Cl100kBase));
        assert!(ModelInfo::lookup("text-embedding-3-small").is_err());
        assert!(ModelInfo::known().all(|m| m.model != "text-embedding-3-small"));
    }

    #[test]
    fn dated_snapshots_and_fine_tunes_resolve_to_their_model() {
        let window = |m: &str| ModelInfo::lookup(m).map(|i| i.context_window);
        assert_eq!(window("gpt-4o-2024-08-06"), Ok(128_000));
        assert_eq!(window("gpt-4o-mini-2024-07-18"), Ok(128_000));
        assert_eq!(window("gpt-4-turbo-2024-04-09"), Ok(128_000));
        assert_eq!(window("gpt-4-0613"), Ok(8_192));
        assert_eq!(window("gpt-4-32k-0314"), Ok(32_768));
        assert_eq!(window("gpt-3.5-turbo-0125"), Ok(16_385));
        assert_eq!(window("ft:gpt-4o-mini-2024-07-18:acme::8Xyz"), Ok(128_000));
        assert_eq!(window("ft:gpt-3.5-turbo"), Ok(16_385));
    }

    #[test]
    fn a_name_that_only_starts_like_a_known_one_is_unknown() {
        for name in [
            "gpt-4o-typo",
            "gpt-4o-",
            "gpt-4o-2024-13-01",
            "gpt-4o-2024-05-32",
            "gpt-4o-24-05-13",
            "gpt-4o-0513",      // gpt-4o snapshots are dated YYYY-MM-DD
            "gpt-4-2024-04-09", // gpt-4 snapshots are dated MMDD
            "gpt-4-0000",
            "gpt-4-0612",
            "gpt-4-06131",
            "gpt-4-0125", // the model is gpt-4-0125-preview
            "chatgpt-4o-latest-2024-08-06",
            "gpt-4oo",
            "GPT-4o",
            "o1x",
            "ft:gpt-4o-typo:acme::1",
            "gpt-4o-2024-05-13-extra",
            "gpt-4o-２０２４-05-13",
        ] {
            let err = ModelInfo::lookup(name).expect_err(name);
            assert!(matches!(err, TokenError::UnknownModel { .. }), "{name}");
            assert!(Encoding::for_model(name).is_err(), "{name}");
        }
    }

    #[test]
    fn an_unknown_model_names_the_table_and_the_closest_name() {
        let err = ModelInfo::lookup("gpt-4o-typo").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`gpt-4o-typo`") && text.contains(MODEL_TABLE), "{text}");
        assert!(text.contains("did you mean `gpt-4o`?"), "{text}");
        let text = ModelInfo::lookup("gpt-4o-mini-typo").unwrap_err().to_string();
        assert!(text.contains("did you mean `gpt-4o-mini`?"), "{text}");
        let text = ModelInfo::lookup("GPT-4.1").unwrap_err().to_string();
        assert!(text.contains("did you mean `gpt-4.1`?"), "{text}");
        let text = ModelInfo::lookup("claude-3-opus").unwrap_err().to_string();
        assert!(!text.contains("did you mean"), "{text}");
    }

    #[test]
    fn unknown_model_is_an_error_never_a_default() {
        let err = ModelInfo::lookup("llama3.2:3b").unwrap_err();
        assert!(matches!(err, TokenError::UnknownModel { .. }));
        assert!(err.to_string().contains("llama3.2:3b"));
        // An explicit window does not make an unknown encoding known.
        assert!(ModelInfo::lookup_with_window("llama3.2:3b", Some(8192)).is_err());
        assert_eq!(ModelInfo::lookup_with_window("gpt-4o", Some(1000)).unwrap().context_window, 1000);
    }

    #[test]
    fn table_names_are_unique_and_none_is_a_snapshot_of_another() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.name, b.name);
            }
            let other = TABLE.iter().find(|k| k.name != a.name && entry(a.name).is_some_and(|e| e.name == k.name));
            assert!(other.is_none(), "{} resolves to another entry", a.name);
        }
    }

    #[test]
    fn encoding_names_round_trip() {
        for e in Encoding::ALL {
            assert_eq!(e.name().parse::<Encoding>().unwrap(), e);
        }
        assert!("p50k".parse::<Encoding>().is_err());
    }

    /// Every entry, and one dated snapshot of each entry that has them, agrees with tiktoken-rs
    /// 0.12.1's tables (o200k_harmony is o200k_base's vocabulary), but for the documented
    /// exception.
    #[cfg(feature = "__tiktoken")]
    #[test]
    fn the_table_agrees_with_tiktoken_rs() {
        use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};
        let theirs = |name: &str| {
            let encoding = match get_tokenizer(name) {
                Some(Tokenizer::Cl100kBase) => Some(Encoding::Cl100kBase),
                Some(Tokenizer::O200kBase | Tokenizer::O200kHarmony) => Some(Encoding::O200kBase),
                _ => None,
            };
            (encoding, tiktoken_rs::model::get_context_size(name))
        };
        for k in TABLE {
            let ours = (Some(k.encoding), k.context_window);
            let mut names = vec![k.name.to_owned()];
            match k.snapshots {
                Snapshots::Iso => names.push(format!("{}-2025-01-31", k.name)),
                Snapshots::MonthDay(dates) => names.extend(dates.iter().map(|d| format!("{}-{d}", k.name))),
                Snapshots::Undated => {}
            }
            for name in names {
                assert_eq!(Encoding::for_model(&name), Ok(k.encoding), "{name}");
                assert_eq!(ModelInfo::lookup(&name).ok().map(|m| m.context_window), k.context_window, "{name}");
                if name == "gpt-4-turbo" {
                    // tiktoken-rs's prefix rules give `gpt-4`'s window to the exact name only.
                    assert_eq!(theirs(&name), (Some(Encoding::Cl100kBase), Some(8_192)));
                    continue;
                }
                assert_eq!(theirs(&name), ours, "{name}");
            }
        }
    }
}
