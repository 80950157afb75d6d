//! `ukernel`: everything it needs comes from its spec (ir-specs/ukernel.toml) for now.
