//! `vector`: everything it needs comes from its spec (ir-specs/vector.toml) for now.
