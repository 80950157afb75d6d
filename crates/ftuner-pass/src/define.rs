//! [`define_pass!`]: a pass declared once — argument, display name, summary, anchor,
//! typed options with their defaults and help, statistics — and its boilerplate
//! generated, as MLIR generates a pass's base class from its `Passes.td` entry. The pass
//! writes only `run_on`, which receives the options as a typed struct: a misspelled
//! option is a compile error, and `--help`, pipeline printing and option parsing all come
//! from the same declaration.

use crate::options::{OptionKind, OptionValue, PassOptions};

/// A Rust type a pass option can have, with the option kind it is parsed as.
pub trait OptionType: Sized {
    const KIND: OptionKind;
    /// The option's value, as [`PassOptions`] parsed it.
    fn read(o: &PassOptions, name: &str) -> Self;
}

impl OptionType for bool {
    const KIND: OptionKind = OptionKind::Bool;
    fn read(o: &PassOptions, name: &str) -> bool {
        matches!(o.value(name), Some(OptionValue::Bool(true)))
    }
}

impl OptionType for i64 {
    const KIND: OptionKind = OptionKind::Int;
    fn read(o: &PassOptions, name: &str) -> i64 {
        match o.value(name) {
            Some(OptionValue::Int(v)) => *v,
            _ => 0,
        }
    }
}

impl OptionType for u64 {
    const KIND: OptionKind = OptionKind::UInt;
    fn read(o: &PassOptions, name: &str) -> u64 {
        match o.value(name) {
            Some(OptionValue::Int(v)) => (*v).max(0) as u64,
            _ => 0,
        }
    }
}

impl OptionType for f64 {
    const KIND: OptionKind = OptionKind::Float;
    fn read(o: &PassOptions, name: &str) -> f64 {
        o.float(name)
    }
}

impl OptionType for String {
    const KIND: OptionKind = OptionKind::String;
    fn read(o: &PassOptions, name: &str) -> String {
        o.str(name)
    }
}

impl OptionType for Vec<String> {
    const KIND: OptionKind = OptionKind::List;
    fn read(o: &PassOptions, name: &str) -> Vec<String> {
        o.list(name)
    }
}

/// Declare a pass; see the module documentation. The pass implements
/// `fn run_on(&mut self, cx: &mut PassContext<'_>, op: OpId, opts: &Options)
/// -> Result<(), PassFailure>` in an `impl` block of its own.
///
/// ```
/// use ftuner_pass::{define_pass, PassContext, PassFailure, Pass};
/// define_pass! {
///     /// Counts operations.
///     pub struct CountOpsPass {
///         argument: "count-ops",
///         name: "CountOps",
///         summary: "Count operations",
///         anchor: "func.func",
///         options: CountOpsOptions {
///             "max-depth" => max_depth: i64 = "8", "Deepest nesting counted";
///             "mode" => mode: String = "all" as ftuner_pass::options::OptionKind::Enum(&["all", "leaf"]), "Which ops";
///         },
///         statistics: {
///             seen: "num-ops" => "Operations seen",
///         },
///     }
/// }
/// impl CountOpsPass {
///     fn run_on(
///         &mut self,
///         cx: &mut PassContext<'_>,
///         op: ftuner_ir::OpId,
///         opts: &CountOpsOptions,
///     ) -> Result<(), PassFailure> {
///         assert_eq!(opts.max_depth, 8);
///         self.seen += cx.ir.count_ops(op) as u64;
///         Ok(())
///     }
/// }
/// let mut p = CountOpsPass::default();
/// p.options().unwrap().set("max-depth", "3").unwrap();
/// assert_eq!(p.typed_options().max_depth, 3);
/// assert!(p.options().unwrap().set("mode", "some").is_err());
/// ```
///
/// A misspelled option is a compile error (the options are fields, not strings):
///
/// ```compile_fail
/// use ftuner_pass::{define_pass, PassContext, PassFailure};
/// define_pass! {
///     pub struct P {
///         argument: "p",
///         name: "P",
///         summary: "s",
///         options: POptions {
///             "mc-blocking" => mc_blocking: bool = "true", "Split M";
///         },
///         statistics: {},
///     }
/// }
/// impl P {
///     fn run_on(&mut self, _: &mut PassContext<'_>, _: ftuner_ir::OpId, o: &POptions)
///         -> Result<(), PassFailure> {
///         let _ = o.mc_bloking;
///         Ok(())
///     }
/// }
/// ```
#[macro_export]
macro_rules! define_pass {
    (
        $(#[$meta:meta])*
        $vis:vis struct $pass:ident {
            argument: $arg:literal,
            name: $name:literal,
            summary: $summary:literal,
            $(description: $desc:literal,)?
            $(anchor: $anchor:expr,)?
            options: $opts:ident {
                $(
                    $oname:literal => $ofield:ident : $oty:ty = $odefault:literal
                        $(as $okind:expr)?, $ohelp:literal;
                )*
            },
            statistics: {
                $( $sfield:ident : $sname:literal => $sdesc:literal, )*
            },
            $(state: {
                $( $(#[$stmeta:meta])* $stfield:ident : $stty:ty, )*
            },)?
        }
    ) => {
        #[doc = concat!("The typed options of [`", stringify!($pass), "`] (`", $arg, "`).")]
        #[derive(Clone, Debug)]
        $vis struct $opts {
            $(
                #[doc = $ohelp]
                pub $ofield: $oty,
            )*
        }

        impl $opts {
            /// The option declarations (name, kind, default, help).
            pub fn specs() -> Vec<$crate::OptionSpec> {
                vec![$(
                    $crate::OptionSpec {
                        name: $oname,
                        kind: $crate::define_pass!(@kind $oty $(, $okind)?),
                        default: $odefault,
                        description: $ohelp,
                    },
                )*]
            }
            /// The values `o` holds, typed.
            #[allow(unused_variables)]
            pub fn read(o: &$crate::PassOptions) -> Self {
                $opts {
                    $( $ofield: <$oty as $crate::define::OptionType>::read(o, $oname), )*
                }
            }
        }

        $(#[$meta])*
        $vis struct $pass {
            opts: $crate::PassOptions,
            $( $sfield: u64, )*
            $($( $(#[$stmeta])* $stfield: $stty, )*)?
        }

        impl Default for $pass {
            fn default() -> Self {
                $pass {
                    opts: $crate::PassOptions::new($opts::specs()),
                    $( $sfield: 0, )*
                    $($( $stfield: Default::default(), )*)?
                }
            }
        }

        impl $pass {
            /// The current option values, typed.
            pub fn typed_options(&self) -> $opts {
                $opts::read(&self.opts)
            }
        }

        impl $crate::Pass for $pass {
            fn argument(&self) -> &'static str {
                $arg
            }
            fn name(&self) -> &'static str {
                $name
            }
            fn summary(&self) -> &'static str {
                $summary
            }
            $(fn description(&self) -> &'static str {
                $desc
            })?
            $(fn anchor(&self) -> Option<&'static str> {
                Some($anchor)
            })?
            fn options(&mut self) -> Option<&mut $crate::PassOptions> {
                (!self.opts.specs.is_empty()).then_some(&mut self.opts)
            }
            fn options_ref(&self) -> Option<&$crate::PassOptions> {
                (!self.opts.specs.is_empty()).then_some(&self.opts)
            }
            fn run(
                &mut self,
                cx: &mut $crate::PassContext<'_>,
                op: $crate::__ir::OpId,
            ) -> Result<(), $crate::PassFailure> {
                let opts = $opts::read(&self.opts);
                self.run_on(cx, op, &opts)
            }
            fn statistics(&self) -> Vec<$crate::Statistic> {
                vec![$(
                    $crate::Statistic {
                        name: $sname,
                        description: $sdesc,
                        value: self.$sfield,
                    },
                )*]
            }
            #[allow(clippy::needless_update)]
            fn clone_pass(&self) -> Box<dyn $crate::Pass> {
                Box::new($pass {
                    opts: self.opts.clone(),
                    ..Default::default()
                })
            }
        }
    };
    (@kind $t:ty) => {
        <$t as $crate::define::OptionType>::KIND
    };
    (@kind $t:ty, $k:expr) => {
        $k
    };
}
