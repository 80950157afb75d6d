//! The pass registry: passes by command-line argument.

use crate::{options::split_options, pipeline, Pass};

pub struct PassInfo {
    pub argument: &'static str,
    pub summary: &'static str,
    pub factory: fn() -> Box<dyn Pass>,
}

/// A pass pipeline registered under a name, used like a pass (`name{opt=value}`) in
/// pipeline text (MLIR's `PassPipelineRegistration`): it expands, where it appears, into
/// the pipeline [`PipelineInfo::expand`] writes for its options.
pub struct PipelineInfo {
    pub argument: &'static str,
    pub summary: &'static str,
    /// Its options: (name, default value, description).
    pub options: &'static [(&'static str, &'static str, &'static str)],
    /// The elements it stands for (pipeline text without an anchor, e.g.
    /// `canonicalize,cse`), given the option values in `options` order.
    pub expand: fn(&[String]) -> String,
}

#[derive(Default)]
pub struct PassRegistry {
    passes: Vec<PassInfo>,
    pipelines: Vec<PipelineInfo>,
    extensions: crate::Extensions,
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
    /// Register a named pipeline (replacing one of the same name).
    pub fn register_pipeline(&mut self, info: PipelineInfo) {
        self.pipelines.retain(|x| x.argument != info.argument);
        self.pipelines.push(info);
        self.pipelines.sort_by(|a, b| a.argument.cmp(b.argument));
    }
    /// Give the passes of every pass manager built from this registry a hook
    /// ([`crate::Extensions`]; one value per type).
    pub fn add_extension<T: std::any::Any + Send + Sync>(&mut self, v: T) {
        self.extensions.insert(v);
    }
    pub fn extensions(&self) -> &crate::Extensions {
        &self.extensions
    }
    pub fn pipelines(&self) -> &[PipelineInfo] {
        &self.pipelines
    }
    /// When `arg` names a registered pipeline: its elements for the option text `options`.
    pub fn expand_pipeline(
        &self,
        arg: &str,
        options: Option<&str>,
    ) -> Option<Result<Vec<pipeline::Element>, String>> {
        let info = self.pipelines.iter().find(|p| p.argument == arg)?;
        Some((|| {
            let mut values: Vec<String> =
                info.options.iter().map(|(_, d, _)| d.to_string()).collect();
            if let Some(text) = options {
                for (k, v) in split_options(text)? {
                    let i = info
                        .options
                        .iter()
                        .position(|(n, _, _)| *n == k)
                        .ok_or_else(|| {
                            format!(
                                "pipeline '{arg}' has no option '{k}' (options: {})",
                                info.options
                                    .iter()
                                    .map(|(n, _, _)| *n)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        })?;
                    values[i] = v;
                }
            }
            let text = (info.expand)(&values);
            pipeline::parse(&text)
                .map(|p| p.elements)
                .map_err(|e| format!("pipeline '{arg}' expands to '{text}': {e}"))
        })())
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
    /// The `--help` section listing every pass and its options, then the pipelines.
    pub fn help(&self) -> String {
        let mut s = self.pass_help();
        if !self.pipelines.is_empty() {
            s.push_str("Pass Pipelines:\n");
            for p in &self.pipelines {
                s.push_str(&format!("  --{:<34} - {}\n", p.argument, p.summary));
                for (n, d, desc) in p.options {
                    s.push_str(&format!(
                        "      {:<32} - {desc} (default: {d})\n",
                        format!("{n}=<string>")
                    ));
                }
            }
        }
        s
    }
    fn pass_help(&self) -> String {
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
                        match r.expand_pipeline(name, options.as_deref()) {
                            Some(els) => rec(r, &els?)?,
                            None => {
                                r.create(name, options.as_deref())?;
                            }
                        }
                    }
                    pipeline::Element::Nested { elements, .. } => rec(r, elements)?,
                }
            }
            Ok(())
        }
        rec(self, &p.elements)
    }
}
