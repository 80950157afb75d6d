//! Analyses cached per operation and invalidated after each pass unless preserved.

use ftuner_ir::{Context, Ir, OpId};
use rustc_hash::{FxHashMap, FxHashSet};
use std::any::{Any, TypeId};

/// An analysis computed on demand from an op and cached.
pub trait Analysis: Any + Send {
    /// Display name, shown as `(A) Name` in timing reports.
    fn name() -> &'static str
    where
        Self: Sized;
    fn compute(ctx: &Context, ir: &Ir, op: OpId) -> Result<Self, String>
    where
        Self: Sized;
}

/// Which analyses a pass keeps valid.
#[derive(Clone, Debug, Default)]
pub enum PreservedAnalyses {
    #[default]
    None,
    All,
    Some(FxHashSet<TypeId>),
}

impl PreservedAnalyses {
    pub fn preserve<A: Analysis>(&mut self) {
        match self {
            PreservedAnalyses::All => {}
            PreservedAnalyses::None => {
                let mut s = FxHashSet::default();
                s.insert(TypeId::of::<A>());
                *self = PreservedAnalyses::Some(s);
            }
            PreservedAnalyses::Some(s) => {
                s.insert(TypeId::of::<A>());
            }
        }
    }
    fn keeps(&self, t: &TypeId) -> bool {
        match self {
            PreservedAnalyses::All => true,
            PreservedAnalyses::None => false,
            PreservedAnalyses::Some(s) => s.contains(t),
        }
    }
}

#[derive(Default)]
pub struct AnalysisManager {
    cache: FxHashMap<(TypeId, OpId), Box<dyn Any + Send>>,
    /// (analysis name, seconds) of each computation, for timing.
    pub computed: Vec<(&'static str, f64)>,
}

impl AnalysisManager {
    pub fn get<A: Analysis>(&mut self, ctx: &Context, ir: &Ir, op: OpId) -> Result<&A, String> {
        let key = (TypeId::of::<A>(), op);
        if !self.cache.contains_key(&key) {
            let t = std::time::Instant::now();
            let a = A::compute(ctx, ir, op)?;
            self.computed.push((A::name(), t.elapsed().as_secs_f64()));
            self.cache.insert(key, Box::new(a));
        }
        self.cache
            .get(&key)
            .and_then(|b| b.downcast_ref::<A>())
            .ok_or_else(|| "analysis cache corrupted".to_string())
    }
    pub fn is_cached<A: Analysis>(&self, op: OpId) -> bool {
        self.cache.contains_key(&(TypeId::of::<A>(), op))
    }
    /// Drop every cached analysis not in `preserved`.
    pub fn invalidate(&mut self, preserved: &PreservedAnalyses) {
        self.cache.retain(|(t, _), _| preserved.keeps(t));
    }
}
