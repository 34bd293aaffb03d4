//! The registry of error codes, as rustc's: one [`Code`] per kind of problem ctx reports, each
//! with its published string ([`Code::as_str`], `UNKNOWN_STEP_TARGET`), its [`Area`] and an
//! explanation (what it means and how to fix it) that `ctx explain CODE` prints.
//!
//! Documented, with the names users use listed one by one, as the facade's `ctx::codes`.
//!
//! A leaf module (it imports nothing of the crate, only `ctx-tokens` from the floor below), so
//! that every area's error can implement [`ErrorCode`] without depending on the error family that
//! wraps them all (`error::CtxError`). The codes of the errors defined below this crate
//! (`ctx_tokens::TokenError`) are given here, in `foreign.rs`.

use std::fmt;
use std::str::FromStr;

/// A stable, machine-readable error code such as `PIPELINE_BUDGET_MISCONFIG`.
///
/// Codes never change meaning once published; messages may be reworded.
pub trait ErrorCode {
    /// The code. Print it, serialize it, compare it with a string (`err.code() == "MODEL_TIMEOUT"`)
    /// or match it (`Code::ModelTimeout`); [`Code::as_str`] gives the `&'static str`.
    fn code(&self) -> Code;
}

/// Writes the enum and its tables from one list: each code's doc lines, variant and string are
/// written once (in `registry.rs`), and the doc lines are both the rustdoc of the variant and
/// the text of [`Code::explanation`].
macro_rules! registry {
    ($( $area:ident { $( $(#[doc = $doc:literal])+ $variant:ident = $text:literal, )* } )*) => {
        /// Every error code ctx produces. See the [module documentation](crate::codes).
        ///
        /// New codes may be added in any release (hence `#[non_exhaustive]`); a published code
        /// never changes its string or meaning.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $($(
                $(#[doc = $doc])+
                #[doc = ""]
                #[doc = concat!("`", $text, "`")]
                $variant,
            )*)*
        }

        impl Code {
            /// Every code, by area.
            pub const ALL: &'static [Code] = &[$($(Code::$variant,)*)*];

            /// The published string, e.g. `"UNKNOWN_STEP_TARGET"`: what messages, JSON output and
            /// `Serialize` show.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($(Code::$variant => $text,)*)*
                }
            }

            /// The part of ctx the code belongs to.
            pub const fn area(self) -> Area {
                match self {
                    $($(Code::$variant => Area::$area,)*)*
                }
            }

            /// The variant's name, e.g. `"UnknownStepTarget"`.
            #[cfg(test)]
            pub(super) const fn variant_name(self) -> &'static str {
                match self {
                    $($(Code::$variant => stringify!($variant),)*)*
                }
            }

            /// The doc lines, each with the one leading space `///` leaves.
            pub(super) fn doc_lines(self) -> &'static [&'static str] {
                match self {
                    $($(Code::$variant => &[$($doc),+],)*)*
                }
            }
        }
    };
}

mod area;
mod foreign;
mod registry;

pub use area::Area;
pub use registry::Code;

impl Code {
    /// The code whose string is `text` (exactly, as [`Code::as_str`] writes it).
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == text)
    }

    /// The code most like `text` (a typo, a lower-case spelling), for "did you mean".
    ///
    /// ```
    /// use ctx::codes::Code;
    ///
    /// assert_eq!(Code::suggest("UNKNOWN_STEP_TARGE").map(Code::as_str), Some("UNKNOWN_STEP_TARGET"));
    /// ```
    pub fn suggest(text: &str) -> Option<Code> {
        ctx_tokens::names::did_you_mean(text, Code::ALL.iter().map(|c| c.as_str())).and_then(Code::parse)
    }

    /// The first line of the explanation: what the code means.
    pub fn summary(self) -> &'static str {
        let first = self.doc_lines()[0];
        first.strip_prefix(' ').unwrap_or(first)
    }

    /// What the code means and how to fix it, as `ctx explain CODE` prints it.
    pub fn explanation(self) -> String {
        let lines: Vec<&str> = self.doc_lines().iter().map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
        lines.join("\n")
    }

    /// Whether the code is a finding about the step graph as a whole (what is reachable, what
    /// cycles). Such findings follow from any transition that could not be read: a front end
    /// that lost one to a syntax error (the `pipeline!` macro, a YAML loader) drops them rather
    /// than report artefacts of that error.
    pub const fn follows_from_graph(self) -> bool {
        matches!(
            self,
            Code::UnreachableStep | Code::EndUnreachable | Code::UnguardedCycle | Code::CustomWithoutOutcomes
        )
    }

    /// The code of which a finding of this code can be a mere echo, when both are about the same
    /// value: the ratios of a context sum to more than 1 ([`Code::EngineRatioSum`]) because one
    /// ratio of the sum is out of range already ([`Code::EngineRatioRange`]). A front end reports
    /// the cause alone.
    pub const fn echo_of(self) -> Option<Code> {
        match self {
            Code::EngineRatioSum => Some(Code::EngineRatioRange),
            _ => None,
        }
    }

    /// Whether the code names several problems of different codes at once (a configuration, a
    /// configuration file or a pipeline file with more than one kind of problem).
    pub const fn is_aggregate(self) -> bool {
        matches!(self, Code::ConfigInvalid | Code::ConfigFileInvalid | Code::PipelineFileInvalid)
    }
}

/// The string, as [`fmt::Display`]: a `ConfigIssue` prints as `code: UNKNOWN_STEP_TARGET`.
impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that is no code's string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCode(pub String);

impl fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown error code `{}`", self.0)
    }
}

impl std::error::Error for UnknownCode {}

impl FromStr for Code {
    type Err = UnknownCode;

    fn from_str(text: &str) -> Result<Code, UnknownCode> {
        Code::parse(text).ok_or_else(|| UnknownCode(text.to_owned()))
    }
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<Code> for &'static str {
    fn from(code: Code) -> &'static str {
        code.as_str()
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<Code> for &str {
    fn eq(&self, other: &Code) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Code> for str {
    fn eq(&self, other: &Code) -> bool {
        self == other.as_str()
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Code, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Code;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an error code of ctx, e.g. \"UNKNOWN_STEP_TARGET\"")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Code, E> {
                Code::parse(text).ok_or_else(|| E::custom(UnknownCode(text.to_owned())))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests;
