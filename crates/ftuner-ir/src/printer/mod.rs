//! Printer: types (`types`), attributes (`attrs`, elements attributes in `dense`),
//! operations and modules (`ops`), with MLIR's alias rules (`#map`, `#set`, `!tuple`, in
//! `aliases`) and spelling.

mod aliases;
mod attrs;
mod dense;
mod ops;
mod types;

pub use aliases::{builtin_alias, collect_aliases, AliasKey, Aliases};
pub use attrs::{
    is_bare_identifier, write_attr, write_attr_body, write_attr_elide, write_escaped_string,
    write_location, write_named_attrs,
};
pub use ops::{print_module, print_module_to, print_op_standalone, OpPrinter, PrintOptions};
pub use types::{write_result_types, write_type, write_type_body, write_type_list};
