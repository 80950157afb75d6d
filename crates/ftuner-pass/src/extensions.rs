//! Hooks a driver hands to the passes it runs, instead of process globals: a value of any
//! type, found by its type. A tool inserts them into its [`crate::PassRegistry`] (e.g.
//! `ftuner-tune` the function that opens tuning databases, which `patch-ukernels` cannot
//! link); every [`crate::PassManager`] built from that registry carries them, and a pass
//! reads them with [`crate::PassContext::extension`].

use std::any::Any;
use std::sync::Arc;

/// Values by type; inserting a second value of a type replaces the first.
#[derive(Clone, Default)]
pub struct Extensions(Vec<Arc<dyn Any + Send + Sync>>);

impl Extensions {
    pub fn insert<T: Any + Send + Sync>(&mut self, v: T) {
        self.0.retain(|x| !x.is::<T>());
        self.0.push(Arc::new(v));
    }
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.0.iter().find_map(|x| x.downcast_ref::<T>())
    }
    /// Add every value of `other` (replacing those of the same types).
    pub fn extend(&mut self, other: &Extensions) {
        for x in &other.0 {
            let id = (**x).type_id();
            self.0.retain(|y| (**y).type_id() != id);
            self.0.push(x.clone());
        }
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Extensions({})", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_by_type_and_replaced() {
        let mut e = Extensions::default();
        e.insert(3u32);
        e.insert("a");
        e.insert(4u32);
        assert_eq!(e.get::<u32>(), Some(&4));
        assert_eq!(e.get::<&str>(), Some(&"a"));
        assert!(e.get::<i64>().is_none());
        let mut f = Extensions::default();
        f.insert(7u32);
        f.extend(&e);
        assert_eq!(f.get::<u32>(), Some(&4));
    }
}
