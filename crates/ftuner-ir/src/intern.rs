//! Uniquing of immutable IR objects (types and attributes).
//!
//! Every distinct value is stored once for the life of the process and handed out as a
//! `&'static` reference, so equality is a pointer comparison and handles are `Copy`,
//! `Send` and `Sync` (passes may run on several threads). This is MLIR's uniquing in
//! `MLIRContext`, with the storage owned by the process instead of one context object.

use rustc_hash::FxHashSet;
use std::hash::Hash;
use std::sync::Mutex;

pub(crate) struct Interner<T: 'static> {
    set: Mutex<FxHashSet<&'static T>>,
}

impl<T: Eq + Hash + 'static> Interner<T> {
    pub(crate) fn new() -> Self {
        Interner {
            set: Mutex::new(FxHashSet::default()),
        }
    }

    pub(crate) fn intern(&self, value: T) -> &'static T {
        let mut set = self.set.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = set.get(&value) {
            return existing;
        }
        let leaked: &'static T = Box::leak(Box::new(value));
        set.insert(leaked);
        leaked
    }
}
