//! `gpu`: everything it needs comes from its spec (ir-specs/gpu.toml) for now.
