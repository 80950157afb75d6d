//! The `lower-ukernels` pass: options, statistics, and the walk over `ukernel.patch` ops.

use super::{lower, Blocking};
use ftuner_dialects::linalg::ins_outs;
use ftuner_ir::{Diagnostic, OpId};
use ftuner_pass::{define_pass, PassContext, PassFailure};

define_pass! {
    /// `lower-ukernels`: realize `ukernel.patch` plans as loops over statically shaped
    /// tiles, on tensors (CPU targets).
    pub struct LowerUkernelsPass {
        argument: "lower-ukernels",
        name: "LowerUkernels",
        summary: "Realize ukernel.patch plans as loops over statically shaped tiles (tensor level)",
        options: LowerUkernelsOptions {
            "vector-bodies" => vector_bodies: i64 = "512",
                "Tiles of at most this many elements get register-level vector bodies (vector.fma over vector<n>); 0 keeps linalg.generic tiles";
            "pack-b" => pack_b: String = "auto",
                "Make register tiles read contiguous rows of B: auto (an [n][k] B transposed to [k][n] when M >= mr and N >= 16; another strided B repacked into [N/nr][K][nr] panels when M >= 2 mr; both decided at run time), true (always panels), false (B read in place)";
            "pack-a" => pack_a: bool = "true",
                "Inside the mc loop, copy A's mc x kc block contiguous when it is large (at least mc/2 rows) and at least 8 N tiles read it (decided at run time)";
            "mc-blocking" => mc_blocking: bool = "true",
                "Split a dynamic M into blocks of the patch's mc (an scf.for around the tile loops, inside the kc loop)";
            "parallel" => parallel: bool = "true",
                "Mark the loops over batches and over full N and M tiles 'ftuner.parallel' (independent iterations); convert-parallel-loops-to-runtime runs the outermost one with enough iterations on the thread pool";
            "k-blocking" => k_blocking: bool = "true",
                "Split the reduction into blocks of the patch's kc (an scf.for around the tile loops)";
            "k-unroll" => k_unroll: i64 = "0",
                "k steps per iteration of a register tile's k loop (LLVM does not unroll a loop carrying its accumulators): a matmul's remainder runs one step at a time; a flat-form conv takes it only where K and its k blocks' step are multiples of it, else one step; 0: two for flat-form convolutions and for other tiles whose k extent is static and even (a static K, or a whole k block of one), one for the rest";
            "loop-order" => loop_order: String = "auto",
                "Which loops run outside: auto (the rules: a matmul's row strips outside its N tiles when M, N and K are static and B fits half of L2; a flat-form conv's blocks of output rows outside its filter panels when that reads less), rows (row strips or row blocks outside wherever the nest allows: not inside a dynamic M's mc blocks), cols (N tiles or filter panels outside)";
        },
        statistics: {
            lowered: "num-lowered" => "Patches lowered to loops",
            skipped: "num-skipped" => "Patches left as they are",
        },
    }
}

impl LowerUkernelsPass {
    fn run_on(
        &mut self,
        cx: &mut PassContext<'_>,
        op: OpId,
        o: &LowerUkernelsOptions,
    ) -> Result<(), PassFailure> {
        let vector_bodies = (o.vector_bodies > 0).then_some(o.vector_bodies);
        let k_blocking = o.k_blocking;
        let order: crate::Order = match o.loop_order.parse() {
            Ok(v) => v,
            Err(e) => {
                cx.emit(Diagnostic::error(cx.ir.loc(op), format!("loop-order: {e}")));
                return Err(PassFailure);
            }
        };
        if !(0..=crate::schedule::MAX_K_UNROLL as i64).contains(&o.k_unroll) {
            cx.emit(Diagnostic::error(
                cx.ir.loc(op),
                format!(
                    "k-unroll must be 0 to {}, got {}",
                    crate::schedule::MAX_K_UNROLL,
                    o.k_unroll
                ),
            ));
            return Err(PassFailure);
        }
        let blocking = Blocking {
            mc: o.mc_blocking,
            pack_a: o.pack_a,
            parallel: o.parallel,
            k_unroll: o.k_unroll,
            rows_outside: order.rows_outside(),
        };
        let pack_b = match o.pack_b.as_str() {
            "auto" => None,
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            other => {
                cx.emit(Diagnostic::error(
                    cx.ir.loc(op),
                    format!("pack-b must be auto, true or false, got '{other}'"),
                ));
                return Err(PassFailure);
            }
        };
        for p in crate::patches_in(cx.ir, op) {
            // A scheduled patch carries its own lowering knobs.
            let sched: Option<crate::Schedule> = match cx.ir.attr(p, "ftuner.schedule") {
                None => None,
                Some(a) => match a.as_str().map(str::parse) {
                    Some(Ok(s)) => Some(s),
                    Some(Err(e)) => {
                        cx.emit(Diagnostic::error(cx.ir.loc(p), e));
                        return Err(PassFailure);
                    }
                    None => {
                        cx.emit(Diagnostic::error(
                            cx.ir.loc(p),
                            "'ftuner.schedule' must be a string attribute",
                        ));
                        return Err(PassFailure);
                    }
                },
            };
            // On buffers: a GPU patch, lower-ukernels-to-gpu's.
            let (ins, outs) = ins_outs(cx.ir, p);
            if ins
                .iter()
                .chain(&outs)
                .any(|v| cx.ir.value_type(*v).is_memref())
            {
                let why = "a patch on buffers (GPU patches are lowered by lower-ukernels-to-gpu after bufferize; CPU patches here, before bufferize)";
                crate::count_outcome(
                    cx,
                    p,
                    Err(why.into()),
                    (&mut self.lowered, &mut self.skipped),
                );
                continue;
            }
            let (vb, kb, pb, bl) = match sched {
                Some(s) => (
                    vector_bodies.map(|v| v.max((s.mr * s.nr) as i64)),
                    s.k_blocking,
                    // A schedule's pack_b=1 forces packing; 0 leaves it to the model.
                    s.pack_b.then_some(true).or(pack_b),
                    // Its loop knobs where it leaves the rule; the pass's options else.
                    Blocking {
                        k_unroll: match s.k_unroll {
                            0 => blocking.k_unroll,
                            u => u as i64,
                        },
                        rows_outside: s.order.rows_outside().or(blocking.rows_outside),
                        pack_a: blocking.pack_a && s.pack_a,
                        ..blocking
                    },
                ),
                None => (vector_bodies, k_blocking, pack_b, blocking),
            };
            let r = lower(cx.ir, p, vb, kb, pb, bl);
            crate::count_outcome(cx, p, r, (&mut self.lowered, &mut self.skipped));
        }
        Ok(())
    }
}
