//! Expansion snapshots.
