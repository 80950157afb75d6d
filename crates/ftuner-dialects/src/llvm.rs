//! `llvm`: everything it needs comes from its spec (ir-specs/llvm.toml) for now.
