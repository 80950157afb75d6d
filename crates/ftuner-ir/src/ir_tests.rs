//! Use-list invariants of `Ir` under random edits.
use super::*;

/// Every value's use list is exactly the operands of live ops that name it, and each
/// op knows where its uses sit.
fn check_use_lists(ir: &Ir) {
    for (vi, vd) in ir.values.iter().enumerate() {
        for (at, u) in vd.uses.iter().enumerate() {
            let o = &ir.ops[u.op.index()];
            assert!(o.alive, "a use by a destroyed op");
            assert_eq!(o.operands[u.operand as usize].index(), vi);
            assert_eq!(o.use_at[u.operand as usize] as usize, at);
        }
    }
    for (oi, o) in ir.ops.iter().enumerate().filter(|(_, o)| o.alive) {
        for (i, v) in o.operands.iter().enumerate() {
            let n = ir.values[v.index()]
                .uses
                .iter()
                .filter(|u| u.op.index() == oi && u.operand as usize == i)
                .count();
            assert_eq!(n, 1, "operand {i} of op {oi} has {n} uses recorded");
        }
    }
}

#[test]
fn use_lists_stay_exact_through_edits() {
    let mut ir = Ir::new();
    let loc = Attribute::unknown_loc();
    let ty = Type::index();
    let blk = ir.new_block(&[]);
    let mut vals = vec![];
    for _ in 0..4 {
        let o = ir.create_op(OpSpec::new(intern_name("t.c"), loc).results([ty]));
        ir.append_op(blk, o);
        vals.push(ir.result(o, 0));
    }
    // Many readers of the same few values, edited in a fixed pseudo-random order.
    let mut users = vec![];
    let mut seed = 7u64;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for _ in 0..200 {
        let ops = [vals[next(4)], vals[next(4)], vals[next(4)]];
        let o = ir.create_op(OpSpec::new(intern_name("t.use"), loc).operands(ops));
        ir.append_op(blk, o);
        users.push(o);
    }
    check_use_lists(&ir);
    for step in 0..600 {
        let u = users[next(users.len())];
        if !ir.is_alive(u) {
            continue;
        }
        match step % 4 {
            0 => {
                let i = next(ir.operands(u).len());
                ir.set_operand(u, i, vals[next(4)])
            }
            1 => ir.set_operands(u, vec![vals[next(4)], vals[next(4)]]),
            2 => ir.erase_op(u),
            _ => ir.replace_all_uses(vals[next(4)], vals[next(4)]),
        }
        check_use_lists(&ir);
    }
    // A destroyed op's operands stay readable.
    let gone = users.iter().find(|u| !ir.is_alive(**u)).copied();
    assert!(gone.is_some_and(|g| !ir.operands(g).is_empty()));
}
