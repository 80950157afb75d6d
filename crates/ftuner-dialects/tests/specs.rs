//! The specs are consistent: every assembly format is well formed, every constraint name
//! is known, and docs/dialects is what ftuner-odsgen generates from ir-specs.

use std::path::Path;

#[test]
fn formats_and_constraints_are_valid() {
    let reg = ftuner_dialects::registry();
    let mut n = 0;
    for def in reg.ops() {
        n += 1;
        if def.format.is_some() {
            ftuner_dialects::format::check_format(def).unwrap();
        }
        for a in def.operands.iter().chain(def.results) {
            assert!(
                ftuner_ir::constraints::TYPE_CONSTRAINTS.contains(&a.constraint),
                "{}: unknown type constraint {}",
                def.name,
                a.constraint
            );
        }
        for a in def.attributes {
            let c = a.constraint;
            assert!(
                ftuner_ir::constraints::ATTR_CONSTRAINTS.contains(&c)
                    || c.starts_with("I64Enum:")
                    || c.starts_with('#'),
                "{}: unknown attribute constraint {c}",
                def.name
            );
        }
        for (name, text) in def.defaults {
            ftuner_dialects::format::parse_attr_text(&ftuner_dialects::context(), text)
                .unwrap_or_else(|e| panic!("{}: default of {name}: {e}", def.name));
        }
    }
    assert!(n > 150, "only {n} ops registered");
}

#[test]
fn dialect_docs_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (_, docs) = ftuner_odsgen::generate_all(&root.join("ir-specs")).unwrap();
    for (name, md) in docs {
        let p = root.join("docs/dialects").join(format!("{name}.md"));
        let committed = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(committed == md, "{} is stale: run `make docs`", p.display());
    }
}
