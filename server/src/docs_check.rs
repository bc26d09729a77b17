//! The manual's references checked against the code they describe, so a
//! command, flag or variable added, renamed or removed without its page
//! fails the unit tests: `docs/cli.md` against clap's command tree, and
//! `docs/configuration.md`'s table against the variables and flags clap
//! reads.

use crate::config::Cli;
use clap::{Command, CommandFactory};
use std::collections::{BTreeMap, BTreeSet};

fn page(name: &str) -> String {
    let path = format!("{}/../docs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every command's path below the root ("user add", "routines run"),
/// clap's own `help` left out.
fn command_paths(cmd: &Command, prefix: &str, out: &mut BTreeSet<String>) {
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let path = format!("{prefix}{}", sub.get_name());
        command_paths(sub, &format!("{path} "), out);
        out.insert(path);
    }
}

/// Every variable clap reads, with the long flag that sets the same value.
fn variables(cmd: &Command, out: &mut BTreeMap<String, Option<String>>) {
    for arg in cmd.get_arguments() {
        if let Some(env) = arg.get_env() {
            let long = arg.get_long().map(|l| format!("--{l}"));
            out.insert(env.to_string_lossy().into_owned(), long);
        }
    }
    for sub in cmd.get_subcommands() {
        variables(sub, out);
    }
}

/// The command path a synopsis line of docs/cli.md spells: the words after
/// `streamkeeper` up to the first argument, flag or comment.
fn documented_path(line: &str) -> Option<String> {
    let rest = line.strip_prefix("streamkeeper")?;
    let words: Vec<&str> = rest
        .split_whitespace()
        .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .filter(|w| !w.starts_with('-'))
        .collect();
    Some(words.join(" "))
}

#[test]
fn the_cli_reference_names_every_command_and_no_other() {
    let mut commands = BTreeSet::new();
    command_paths(&Cli::command(), "", &mut commands);
    let text = page("cli.md");
    let documented: BTreeSet<String> = text
        .lines()
        .filter_map(documented_path)
        .filter(|p| !p.is_empty())
        .collect();
    // A group shows through its commands ("user add" documents "user").
    let shown = |c: &String| {
        documented.contains(c) || documented.iter().any(|d| d.starts_with(&format!("{c} ")))
    };
    let missing: Vec<&String> = commands.iter().filter(|c| !shown(c)).collect();
    assert!(missing.is_empty(), "docs/cli.md lacks {missing:?}");
    let unknown: Vec<&String> = documented.difference(&commands).collect();
    assert!(
        unknown.is_empty(),
        "docs/cli.md names commands clap does not have: {unknown:?}"
    );
}

#[test]
fn the_configuration_table_names_every_variable_with_its_flag() {
    let mut vars = BTreeMap::new();
    variables(&Cli::command(), &mut vars);
    let text = page("configuration.md");
    // The table's rows: | `VARIABLE` | `--flag` (or `serve --flag`) | …
    let rows: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| {
            let mut cells = l.strip_prefix("| `")?.splitn(3, " | ");
            let var = cells.next()?.strip_suffix('`')?.to_string();
            Some((var, cells.next()?.to_string()))
        })
        .collect();
    for (var, long) in &vars {
        let flag = rows
            .get(var)
            .unwrap_or_else(|| panic!("docs/configuration.md has no row for {var}"));
        if let Some(long) = long {
            assert!(
                flag.contains(&format!("`{long}`")) || flag.contains(&format!(" {long}`")),
                "docs/configuration.md gives {var} the flag {flag}, clap {long}"
            );
        }
    }
    let unknown: Vec<&String> = rows.keys().filter(|v| !vars.contains_key(*v)).collect();
    assert!(
        unknown.is_empty(),
        "docs/configuration.md names variables clap does not read: {unknown:?}"
    );
}
