//! Validating a connector's table into its plan: the one thing a connector's validation is given.
//! It names the table (`sinks.orders`), says what the job around it is (does it checkpoint), and
//! collects problems, each at a key path, which the plan reports with every other problem of the
//! config at once, located in the file.

use crate::config::KeyPath;

/// The table being validated and the problems found in it.
pub struct Check<'a> {
    /// `sources` or `sinks`, and the table's name: every key path starts with these.
    section: &'a str,
    pub name: &'a str,
    /// The job has a `[checkpoint]` section.
    pub checkpointed: bool,
    problems: Vec<(KeyPath, String)>,
}

impl<'a> Check<'a> {
    pub fn new(section: &'a str, name: &'a str, checkpointed: bool) -> Check<'a> {
        Check {
            section,
            name,
            checkpointed,
            problems: Vec::new(),
        }
    }

    /// The table's own key path (`sinks.orders`).
    pub fn table(&self) -> KeyPath {
        KeyPath::new([self.section, self.name])
    }

    /// The path of key `k` of the table (`sinks.orders.topic`).
    pub fn key(&self, k: &str) -> KeyPath {
        self.table().key(k)
    }

    /// A problem at `key`.
    pub fn err(&mut self, key: KeyPath, message: String) {
        self.problems.push((key, message));
    }

    /// Every problem found, in the order found.
    pub fn into_problems(self) -> Vec<(KeyPath, String)> {
        self.problems
    }
}
