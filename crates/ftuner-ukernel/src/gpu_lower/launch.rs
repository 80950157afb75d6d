//! The host side of a GPU patch: the plan tables as constant globals, the launches
//! that cover each dimension (full tiles as one grid, the residue's tiles one by one) and
//! the kernel selection on run-time tile sizes.

use super::{body_block, if_positive, symbols, Sz, KERNEL_MODULE};
use crate::lower::{residue_tiles, Plan, B};
use ftuner_dialects::ops;
use ftuner_ir::{intern_name, AttrKind, Attribute, BlockId, Ir, OpId, OpSpec, Type, Value};
use rustc_hash::FxHashMap;

/// The kernels of one patch: their name prefix, threads per block of each block shape,
/// the tile sizes the plans use along M and N, and the operands every launch passes.
pub(super) struct Kernels {
    pub(super) prefix: String,
    pub(super) threads: FxHashMap<(i64, i64), i64>,
    pub(super) ms: Vec<i64>,
    pub(super) ns: Vec<i64>,
    /// A, B, C and the epilogue operands.
    pub(super) operands: Vec<Value>,
}

/// Where plan tables go: private constant globals of the top-level module.
pub(super) struct Tables {
    pub(super) top: OpId,
    pub(super) stem: String,
}

impl Tables {
    /// A `memref.global` holding `residues` as a `main x len` index table; its name.
    fn global(&self, ir: &mut Ir, which: &str, plan: &Plan, len: usize, loc: Attribute) -> String {
        let (main, _, residues) = plan;
        let name = format!("__{}{which}_plan", self.stem);
        let body = body_block(ir, self.top);
        if body.is_some_and(|b| symbols(ir, b).contains(&name)) {
            return name;
        }
        let mut flat = vec![];
        for r in residues {
            for k in 0..len {
                flat.push(ftuner_ir::Scalar::Int(
                    r.get(k).copied().unwrap_or(0) as i128
                ));
            }
        }
        let tty = Type::tensor(vec![*main, len as i64], Type::index());
        let g = ir.create_op(
            OpSpec::new(intern_name(ops::memref::GlobalOp::NAME), loc)
                .prop("sym_name", Attribute::string(name.clone()))
                .prop("sym_visibility", Attribute::string("private"))
                .prop(
                    "type",
                    Attribute::type_attr(Type::memref(vec![*main, len as i64], Type::index())),
                )
                .prop("initial_value", Attribute::dense(tty, flat))
                .prop("constant", Attribute::unit()),
        );
        if let Some(body) = body {
            ir.prepend_op(body, g);
        }
        name
    }
}

/// The tiles of one dimension of extent `total`: all full tiles as one group
/// (`body(offset 0, count total/main, main)`), then the residue's tiles one by one
/// (`body(offset, 1, size)`), from the plan table or, for a static extent, in line.
pub(super) fn cover(
    b: &mut B<'_>,
    blk: BlockId,
    total: Value,
    plan: &Plan,
    tables: &Tables,
    which: &str,
    body: &mut dyn FnMut(&mut B<'_>, BlockId, Value, Value, Sz),
) {
    let (main, st, residues) = plan;
    let main = *main;
    let c0 = b.index(blk, 0);
    let c1 = b.index(blk, 1);
    if let Some(st) = *st {
        if st >= main {
            let q = b.index(blk, st / main);
            body(b, blk, c0, q, Sz::Static(main));
        }
        let mut off = st - st % main;
        for &t in &residues[(st % main) as usize] {
            let o = b.index(blk, off);
            body(b, blk, o, c1, Sz::Static(t));
            off += t;
        }
        return;
    }
    let cm = b.index(blk, main);
    let q = b.ibin(blk, ops::arith::DivuiOp::NAME, total, cm);
    let full = b.ibin(blk, ops::arith::MuliOp::NAME, q, cm);
    let rem = b.ibin(blk, ops::arith::SubiOp::NAME, total, full);
    // Full tiles: one group, when there is any.
    if_positive(b, blk, q, &mut |b, tb| {
        let c0t = b.index(tb, 0);
        body(b, tb, c0t, q, Sz::Static(main));
    });
    // The residue's tiles, from the plan table.
    let len = residues.iter().map(|v| v.len()).max().unwrap_or(0);
    if len == 0 {
        return;
    }
    let loc = b.loc;
    let name = tables.global(b.ir, which, plan, len, loc);
    let gty = Type::memref(vec![main, len as i64], Type::index());
    let table = b.val(
        blk,
        ops::memref::GetGlobalOp::NAME,
        vec![],
        gty,
        vec![("name", Attribute::symbol_ref(name))],
    );
    residue_tiles(
        b,
        blk,
        len as i64,
        full,
        vec![],
        &mut |b, lb, k| {
            b.val(
                lb,
                ops::memref::LoadOp::NAME,
                vec![table, rem, k],
                Type::index(),
                vec![],
            )
        },
        &mut |b, tb, off, t, _| {
            let one = b.index(tb, 1);
            body(b, tb, off, one, Sz::Dyn(t));
            vec![]
        },
    );
}

/// Launch the kernel of tile `(mt, nt)` over `grid` blocks at `(m0, n0)`; a size known
/// only at run time selects the kernel with an `scf.index_switch` on `1000·m + n`.
pub(super) fn launch(
    b: &mut B<'_>,
    blk: BlockId,
    k: &Kernels,
    (mt, nt): (Sz, Sz),
    grid: [Value; 3],
    (m0, n0): (Value, Value),
) {
    let one = |b: &mut B<'_>, blk: BlockId, m: i64, n: i64| {
        let t = k.threads[&(m, n)];
        let tv = b.index(blk, t);
        let c1 = b.index(blk, 1);
        let mut ops = grid.to_vec();
        ops.extend([tv, c1, c1]);
        ops.extend(k.operands.iter().copied());
        ops.extend([m0, n0]);
        let segs = [
            0,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            0,
            0,
            0,
            k.operands.len() as i32 + 2,
            0,
        ];
        let sym = Attribute::get(AttrKind::SymbolRef {
            root: KERNEL_MODULE.into(),
            nested: vec![format!("{}{m}x{n}", k.prefix)],
        });
        b.op(
            blk,
            ops::gpu::LaunchFuncOp::NAME,
            ops,
            vec![],
            vec![
                ("kernel", sym),
                ("operandSegmentSizes", Attribute::dense_i32_array(&segs)),
            ],
            0,
        );
    };
    let (sel_m, ms) = match mt {
        Sz::Static(m) => (None, vec![m]),
        Sz::Dyn(v) => (Some(v), k.ms.clone()),
    };
    let (sel_n, ns) = match nt {
        Sz::Static(n) => (None, vec![n]),
        Sz::Dyn(v) => (Some(v), k.ns.clone()),
    };
    if sel_m.is_none() && sel_n.is_none() {
        one(b, blk, ms[0], ns[0]);
        return;
    }
    // selector = 1000·m + n
    let mv = match sel_m {
        Some(v) => v,
        None => b.index(blk, ms[0]),
    };
    let nv = match sel_n {
        Some(v) => v,
        None => b.index(blk, ns[0]),
    };
    let thousand = b.index(blk, 1000);
    let hi = b.ibin(blk, ops::arith::MuliOp::NAME, mv, thousand);
    let sel = b.ibin(blk, ops::arith::AddiOp::NAME, hi, nv);
    let mut cases = vec![];
    for &m in &ms {
        for &n in &ns {
            cases.push((m, n));
        }
    }
    let keys: Vec<i64> = cases.iter().map(|(m, n)| 1000 * m + n).collect();
    let sw = b.op(
        blk,
        ops::scf::IndexSwitchOp::NAME,
        vec![sel],
        vec![],
        vec![("cases", Attribute::dense_i64_array(&keys))],
        cases.len() + 1,
    );
    let regions = b.ir.regions_of(sw).to_vec();
    let d = b.ir.append_block(regions[0], &[]);
    b.yield_(d, ops::scf::YieldOp::NAME, vec![]);
    for (i, (m, n)) in cases.into_iter().enumerate() {
        let cb = b.ir.append_block(regions[i + 1], &[]);
        one(b, cb, m, n);
        b.yield_(cb, ops::scf::YieldOp::NAME, vec![]);
    }
}
