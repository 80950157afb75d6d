//! Upstream MLIR, contained: the import of a module ftuner's parser does not take runs in
//! a child process (the same binary, started with [`CHILD_FLAG`]), so a crash of upstream
//! MLIR on hostile input (issue 25: a malformed `permutation` array segfaults its
//! verifier, deep nesting overflows its stack) is an error of the driver, not its death.
//!
//! The child reads the source on stdin, imports it with the installed [`Importer`] and
//! writes one line of JSON (the operations kept generic, the frontends lowered), then the
//! module in the generic form with its locations, which the parent parses with its own
//! parser. Upstream's own error comes back as the child's stderr.

use crate::Importer;
use ftuner_ir::{parse_module, print_module, Context, ParsedModule, PrintOptions};
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// The first argument that makes an ftuner tool serve one contained import and exit.
pub const CHILD_FLAG: &str = "--ftuner-upstream-import-child";

/// What an import returns: the module, the operations kept generic (with counts), the
/// frontends upstream's conversions lowered.
pub type Imported = (ParsedModule, Vec<(String, usize)>, Vec<String>);

/// In the child (`args`: the file name, then `lower` as 0 or 1): serve the import.
pub(crate) fn child_main(import: Importer, args: &[String]) -> i32 {
    let file = args.first().map_or("<stdin>", String::as_str);
    let lower = args.get(1).is_some_and(|a| a == "1");
    let mut src = String::new();
    if std::io::stdin().read_to_string(&mut src).is_err() {
        eprintln!("the input is not valid UTF-8");
        return 1;
    }
    let mut ctx = ftuner_transforms::context();
    ctx.allow_unregistered = true;
    match import(&mut ctx, &src, file, lower) {
        Ok((m, unmodeled, lowered)) => {
            let head = serde_json::json!({ "unmodeled": unmodeled, "lowered": lowered });
            let text = print_module(
                &m.ir,
                &ctx,
                m.top,
                PrintOptions {
                    generic: true,
                    debuginfo: true,
                },
            );
            let mut out = std::io::stdout().lock();
            let ok = writeln!(out, "{head}").and_then(|_| out.write_all(text.as_bytes()));
            i32::from(ok.is_err())
        }
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// In the parent: import `src` in a child process. Errors are upstream's message, or what
/// became of the child (a signal is "upstream MLIR crashed").
pub(crate) fn import(
    ctx: &Context,
    src: &str,
    file: &str,
    lower: bool,
) -> Result<Imported, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot start upstream MLIR: {e}"))?;
    let mut child = Command::new(exe)
        .arg(CHILD_FLAG)
        .arg(file)
        .arg(if lower { "1" } else { "0" })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start upstream MLIR: {e}"))?;
    // The child reads all of its input before it writes: write, then collect.
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(src.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("upstream MLIR: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = said
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(20)
            .collect();
        return Err(match out.status.code() {
            Some(_) => said.join("\n"),
            None => {
                use std::os::unix::process::ExitStatusExt;
                format!(
                    "upstream MLIR crashed reading this file (signal {}){}",
                    out.status.signal().unwrap_or(0),
                    if said.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", said.join(" "))
                    }
                )
            }
        });
    }
    let text = String::from_utf8(out.stdout).map_err(|_| "upstream MLIR wrote invalid UTF-8")?;
    let (head, body) = text.split_once('\n').unwrap_or((&text, ""));
    let head: serde_json::Value =
        serde_json::from_str(head).map_err(|e| format!("upstream MLIR's import: {e}"))?;
    let unmodeled = head["unmodeled"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| Some((x[0].as_str()?.to_string(), x[1].as_u64()? as usize)))
                .collect()
        })
        .unwrap_or_default();
    let lowered = head["lowered"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| Some(x.as_str()?.to_string()))
                .collect()
        })
        .unwrap_or_default();
    let mut c = ctx.clone();
    c.allow_unregistered = true;
    let m = parse_module(&c, body, file).map_err(|d| {
        format!(
            "the module upstream MLIR read does not parse again: {}",
            d.message
        )
    })?;
    Ok((m, unmodeled, lowered))
}
