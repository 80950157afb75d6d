//! The pass registry: passes by command-line argument.

use crate::{options::split_options, pipeline, Pass};

pub struct PassInfo {
    pub argument: &'static str,
    pub summary: &'static str,
    pub factory: fn() -> Box<dyn Pass>,
}

#[derive(Default)]
pub struct PassRegistry {
    passes: Vec<PassInfo>,
}

impl PassRegistry {
    pub fn register(&mut self, factory: fn() -> Box<dyn Pass>) {
        let p = factory();
        let info = PassInfo {
            argument: p.argument(),
            summary: p.summary(),
            factory,
        };
        self.passes.retain(|x| x.argument != info.argument);
        self.passes.push(info);
        self.passes.sort_by(|a, b| a.argument.cmp(b.argument));
    }
    pub fn lookup(&self, arg: &str) -> Option<&PassInfo> {
        self.passes.iter().find(|p| p.argument == arg)
    }
    pub fn passes(&self) -> &[PassInfo] {
        &self.passes
    }
    /// A pass instance with options applied from `{...}` text.
    pub fn create(&self, arg: &str, options: Option<&str>) -> Result<Box<dyn Pass>, String> {
        let info = self.lookup(arg).ok_or_else(|| {
            format!("'{arg}' does not refer to a registered pass or pass pipeline")
        })?;
        let mut p = (info.factory)();
        if let Some(text) = options {
            let pairs = split_options(text)?;
            for (k, v) in pairs {
                let opts = p
                    .options()
                    .ok_or_else(|| format!("pass '{arg}' takes no options (got '{k}')"))?;
                opts.set(&k, &v).map_err(|e| format!("pass '{arg}': {e}"))?;
            }
        }
        Ok(p)
    }
    /// The `--help` section listing every pass and its options.
    pub fn help(&self) -> String {
        let mut s = String::from("Passes:\n");
        for info in &self.passes {
            s.push_str(&format!("  --{:<34} - {}\n", info.argument, info.summary));
            let mut p = (info.factory)();
            if let Some(o) = p.options() {
                for spec in &o.specs {
                    let kind = match &spec.kind {
                        crate::options::OptionKind::Enum(c) => format!("<{}>", c.join("|")),
                        k => format!("<{}>", format!("{k:?}").to_lowercase()),
                    };
                    s.push_str(&format!(
                        "      {:<32} - {} (default: {})\n",
                        format!("{}={kind}", spec.name),
                        spec.description,
                        spec.default
                    ));
                }
            }
        }
        s
    }
    /// Validate a parsed pipeline (every pass exists, options parse).
    pub fn check(&self, p: &pipeline::Pipeline) -> Result<(), String> {
        fn rec(r: &PassRegistry, els: &[pipeline::Element]) -> Result<(), String> {
            for e in els {
                match e {
                    pipeline::Element::Pass { name, options } => {
                        r.create(name, options.as_deref())?;
                    }
                    pipeline::Element::Nested { elements, .. } => rec(r, elements)?,
                }
            }
            Ok(())
        }
        rec(self, &p.elements)
    }
}
