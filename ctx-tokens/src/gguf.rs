//! A GGUF metadata reader: the header and the key/value section of a model file, nothing more.
//!
//! A GGUF file is a small header, a key/value section (architecture, context length, the whole
//! tokenizer — vocabulary, merges, token types — and the chat template), then tensor descriptions
//! and gigabytes of weights. Counting tokens needs only the key/value section, so this reads it
//! through a buffered reader and stops there: a 5 GB model costs a few megabytes of reading.
//!
//! Every length in the file is checked against the bytes the file still has before anything is
//! allocated, arrays nest at most [`MAX_DEPTH`] deep, and every failure is a [`GgufError`] naming
//! the file and the byte offset: no input makes this reader panic or allocate more than the file
//! could hold (`tests` feeds it random and mutated files).
//!
//! The format (version 2 and 3, little-endian) is ggml's `docs/gguf.md`: magic `GGUF`, `u32`
//! version, `u64` tensor count, `u64` key/value count, then per entry a string key (`u64` length
//! and UTF-8 bytes), a `u32` value type and the value.

use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// How deep arrays of arrays may nest (real files nest at most once).
pub const MAX_DEPTH: usize = 8;

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum GgufValue {
    /// Any unsigned integer type (`u8`, `u16`, `u32`, `u64`).
    Uint(u64),
    /// Any signed integer type (`i8`, `i16`, `i32`, `i64`).
    Int(i64),
    /// `f32` or `f64`.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A UTF-8 string.
    Str(String),
    /// An array (its items all have one type in the file).
    Array(Vec<GgufValue>),
}

impl GgufValue {
    /// The value as an unsigned integer, when it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            GgufValue::Uint(n) => Some(n),
            GgufValue::Int(n) => u64::try_from(n).ok(),
            _ => None,
        }
    }

    /// The value as a signed integer, when it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            GgufValue::Uint(n) => i64::try_from(n).ok(),
            GgufValue::Int(n) => Some(n),
            _ => None,
        }
    }

    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            GgufValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, when the value is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            GgufValue::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The items, when the value is an array.
    pub fn as_array(&self) -> Option<&[GgufValue]> {
        match self {
            GgufValue::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The type's name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            GgufValue::Uint(_) => "unsigned integer",
            GgufValue::Int(_) => "integer",
            GgufValue::Float(_) => "float",
            GgufValue::Bool(_) => "bool",
            GgufValue::Str(_) => "string",
            GgufValue::Array(_) => "array",
        }
    }
}

/// Why a GGUF file's metadata could not be read or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GgufError {
    /// The file could not be opened or read.
    #[error("cannot read GGUF file `{path}`: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's words.
        reason: String,
    },
    /// The bytes are not a GGUF file this reader understands.
    #[error("`{path}` is not a readable GGUF file (at byte {offset}): {reason}")]
    Format {
        /// The file.
        path: String,
        /// Where the problem was found.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A key the caller needs is absent.
    #[error("GGUF file `{path}` has no `{key}` in its metadata")]
    Missing {
        /// The file.
        path: String,
        /// The key.
        key: String,
    },
    /// A key holds a value of another type than the one expected.
    #[error("GGUF file `{path}`: `{key}` should be {expected}, found {found}")]
    Type {
        /// The file.
        path: String,
        /// The key.
        key: String,
        /// The expected type.
        expected: &'static str,
        /// What was found.
        found: String,
    },
}

/// The metadata of a GGUF file: its version, tensor count and key/value entries.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufMetadata {
    path: PathBuf,
    version: u32,
    tensor_count: u64,
    entries: BTreeMap<String, GgufValue>,
}

impl GgufMetadata {
    /// Reads the header and metadata of the GGUF file at `path` (never the tensors).
    pub fn read(path: impl AsRef<Path>) -> Result<Self, GgufError> {
        let path = path.as_ref();
        let io = |e: std::io::Error| GgufError::Io { path: path.display().to_string(), reason: e.to_string() };
        let file = std::fs::File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Self::from_reader(BufReader::with_capacity(1 << 16, file), len, path)
    }

    /// Parses the metadata at the start of `bytes` (a whole file or its first part); `path` names
    /// it in errors.
    pub fn parse(bytes: &[u8], path: impl AsRef<Path>) -> Result<Self, GgufError> {
        Self::from_reader(bytes, bytes.len() as u64, path.as_ref())
    }

    fn from_reader(reader: impl Read, len: u64, path: &Path) -> Result<Self, GgufError> {
        let mut r = Reader { inner: reader, offset: 0, len, path };
        let magic = r.bytes_fixed::<4>()?;
        if &magic != b"GGUF" {
            return Err(r.format_at(0, "the file does not start with `GGUF`"));
        }
        let version = r.u32()?;
        if !(2..=3).contains(&version) {
            // Version 1 used 32-bit lengths; a big-endian file shows a byte-swapped version.
            return Err(r.format_at(4, format!("GGUF version {version} is not supported (2 and 3 are)")));
        }
        let tensor_count = r.u64()?;
        let kv_count = r.u64()?;
        // Every entry takes at least 8 (key length) + 4 (type) + 1 bytes.
        r.check_room(kv_count, 13, "metadata entries")?;
        let mut entries = BTreeMap::new();
        for _ in 0..kv_count {
            let at = r.offset;
            let key = r.string()?;
            let value_type = r.u32()?;
            let value = r.value(value_type, 0)?;
            if entries.insert(key.clone(), value).is_some() {
                return Err(r.format_at(at, format!("the key `{key}` appears twice")));
            }
        }
        Ok(GgufMetadata { path: path.to_owned(), version, tensor_count, entries })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The GGUF version (2 or 3).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// How many tensors the file declares.
    pub fn tensor_count(&self) -> u64 {
        self.tensor_count
    }

    /// Every key/value entry, by key.
    pub fn entries(&self) -> &BTreeMap<String, GgufValue> {
        &self.entries
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&GgufValue> {
        self.entries.get(key)
    }

    /// The value of `key`, or [`GgufError::Missing`].
    pub fn require(&self, key: &str) -> Result<&GgufValue, GgufError> {
        self.get(key).ok_or_else(|| GgufError::Missing { path: self.path_text(), key: key.to_owned() })
    }

    /// The string at `key`: `None` when absent, an error when it is not a string.
    pub fn str(&self, key: &str) -> Result<Option<&str>, GgufError> {
        self.get(key).map(|v| v.as_str().ok_or_else(|| self.type_error(key, "a string", v))).transpose()
    }

    /// The non-negative integer at `key`: `None` when absent, an error when it is not one.
    pub fn u64(&self, key: &str) -> Result<Option<u64>, GgufError> {
        self.get(key).map(|v| v.as_u64().ok_or_else(|| self.type_error(key, "a non-negative integer", v))).transpose()
    }

    /// The boolean at `key`: `None` when absent, an error when it is not a boolean.
    pub fn bool(&self, key: &str) -> Result<Option<bool>, GgufError> {
        self.get(key).map(|v| v.as_bool().ok_or_else(|| self.type_error(key, "a bool", v))).transpose()
    }

    /// The array of strings at `key` (required).
    pub fn strings(&self, key: &str) -> Result<Vec<&str>, GgufError> {
        let value = self.require(key)?;
        let items = value.as_array().ok_or_else(|| self.type_error(key, "an array of strings", value))?;
        items.iter().map(|v| v.as_str().ok_or_else(|| self.type_error(key, "an array of strings", v))).collect()
    }

    /// The array of integers at `key` (required).
    pub fn ints(&self, key: &str) -> Result<Vec<i64>, GgufError> {
        let value = self.require(key)?;
        let items = value.as_array().ok_or_else(|| self.type_error(key, "an array of integers", value))?;
        items.iter().map(|v| v.as_i64().ok_or_else(|| self.type_error(key, "an array of integers", v))).collect()
    }

    /// `general.architecture` (`llama`, `qwen2`, …).
    pub fn architecture(&self) -> Result<Option<&str>, GgufError> {
        self.str("general.architecture")
    }

    /// The model's training context length, `<architecture>.context_length`.
    pub fn context_length(&self) -> Result<Option<u64>, GgufError> {
        match self.architecture()? {
            Some(arch) => self.u64(&format!("{arch}.context_length")),
            None => Ok(None),
        }
    }

    /// The model's chat template, `tokenizer.chat_template`.
    pub fn chat_template(&self) -> Result<Option<&str>, GgufError> {
        self.str("tokenizer.chat_template")
    }

    /// The text of the token with id `key`'s value (for `tokenizer.ggml.bos_token_id` and the
    /// like): `None` when the key is absent or the id is not in the vocabulary.
    pub fn token_text(&self, id_key: &str) -> Result<Option<&str>, GgufError> {
        let Some(id) = self.u64(id_key)? else { return Ok(None) };
        let tokens = self.require("tokenizer.ggml.tokens")?;
        Ok(tokens.as_array().and_then(|items| items.get(usize::try_from(id).ok()?)).and_then(GgufValue::as_str))
    }

    pub(crate) fn path_text(&self) -> String {
        self.path.display().to_string()
    }

    pub(crate) fn type_error(&self, key: &str, expected: &'static str, found: &GgufValue) -> GgufError {
        GgufError::Type { path: self.path_text(), key: key.to_owned(), expected, found: found.type_name().to_owned() }
    }
}

/// A reader that knows how many bytes remain, so no length read from the file is trusted.
struct Reader<'p, R> {
    inner: R,
    offset: u64,
    len: u64,
    path: &'p Path,
}

impl<R: Read> Reader<'_, R> {
    fn format_at(&self, offset: u64, reason: impl Into<String>) -> GgufError {
        GgufError::Format { path: self.path.display().to_string(), offset, reason: reason.into() }
    }

    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.offset)
    }

    /// Refuses `count` items of at least `each` bytes when the file has not that many bytes left.
    fn check_room(&self, count: u64, each: u64, what: &str) -> Result<(), GgufError> {
        match count.checked_mul(each) {
            Some(needed) if needed <= self.remaining() => Ok(()),
            _ => Err(self
                .format_at(self.offset, format!("{count} {what} declared but only {} bytes remain", self.remaining()))),
        }
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<(), GgufError> {
        let at = self.offset;
        self.inner.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => self.format_at(at, "the file ends inside the metadata"),
            _ => GgufError::Io { path: self.path.display().to_string(), reason: e.to_string() },
        })?;
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn bytes_fixed<const N: usize>(&mut self) -> Result<[u8; N], GgufError> {
        let mut buf = [0u8; N];
        self.fill(&mut buf)?;
        Ok(buf)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        self.bytes_fixed::<4>().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        self.bytes_fixed::<8>().map(u64::from_le_bytes)
    }

    fn string(&mut self) -> Result<String, GgufError> {
        let at = self.offset;
        let len = self.u64()?;
        self.check_room(len, 1, "string bytes")?;
        let mut buf = vec![0u8; usize::try_from(len).map_err(|_| self.format_at(at, "string too long"))?];
        self.fill(&mut buf)?;
        String::from_utf8(buf).map_err(|e| self.format_at(at, format!("a string is not UTF-8 ({e})")))
    }

    /// One value of type `ty` (ggml's `gguf_type` numbering).
    fn value(&mut self, ty: u32, depth: usize) -> Result<GgufValue, GgufError> {
        let at = self.offset;
        Ok(match ty {
            0 => GgufValue::Uint(u64::from(self.bytes_fixed::<1>()?[0])),
            1 => GgufValue::Int(i64::from(i8::from_le_bytes(self.bytes_fixed::<1>()?))),
            2 => GgufValue::Uint(u64::from(u16::from_le_bytes(self.bytes_fixed::<2>()?))),
            3 => GgufValue::Int(i64::from(i16::from_le_bytes(self.bytes_fixed::<2>()?))),
            4 => GgufValue::Uint(u64::from(self.u32()?)),
            5 => GgufValue::Int(i64::from(i32::from_le_bytes(self.bytes_fixed::<4>()?))),
            6 => GgufValue::Float(f64::from(f32::from_le_bytes(self.bytes_fixed::<4>()?))),
            7 => match self.bytes_fixed::<1>()?[0] {
                0 => GgufValue::Bool(false),
                1 => GgufValue::Bool(true),
                other => return Err(self.format_at(at, format!("a bool holds {other}"))),
            },
            8 => GgufValue::Str(self.string()?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(self.format_at(at, format!("arrays nest deeper than {MAX_DEPTH}")));
                }
                let item_type = self.u32()?;
                let count = self.u64()?;
                self.check_room(count, min_size(item_type), "array items")?;
                let capacity = usize::try_from(count).map_err(|_| self.format_at(at, "array too long"))?;
                let mut items = Vec::with_capacity(capacity);
                for _ in 0..count {
                    items.push(self.value(item_type, depth + 1)?);
                }
                GgufValue::Array(items)
            }
            10 => GgufValue::Uint(self.u64()?),
            11 => GgufValue::Int(i64::from_le_bytes(self.bytes_fixed::<8>()?)),
            12 => GgufValue::Float(f64::from_le_bytes(self.bytes_fixed::<8>()?)),
            other => return Err(self.format_at(at, format!("unknown value type {other}"))),
        })
    }
}

/// The fewest bytes one value of type `ty` takes in the file (1 for an unknown type, which is
/// refused when read).
fn min_size(ty: u32) -> u64 {
    match ty {
        2 | 3 => 2,
        4..=6 => 4,
        8 | 10..=12 => 8,
        9 => 12,
        _ => 1,
    }
}

#[cfg(test)]
mod tests;
