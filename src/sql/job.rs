//! A job whose pipeline is SQL: `[pipeline] sql = "jobs/clicks.sql"` (a file) or the SQL text
//! itself, next to the usual `[runtime]`, `[checkpoint]` and `[api]`. The SQL compiles to the
//! typed tables of its sources, transforms and sinks, which join the job's own config and are
//! validated with it, so nothing downstream knows the job was SQL; a problem the plan finds in a
//! compiled part points at the SQL statement it comes from.

use std::path::{Path, PathBuf};

use crate::config::{KeyPath, Location, SourceText};

use super::SqlError;

/// Where a job's SQL came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlOrigin {
    /// A `.sql` file: errors name it with the SQL's own line and column.
    File(PathBuf),
    /// Inline text in the job file, whose first SQL line is at this place of the file.
    Inline(Location),
}

/// A job's SQL failed to read or compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobSqlError {
    #[error("{at}: pipeline.sql: cannot read the SQL file {path}: {reason}")]
    Read {
        at: Location,
        path: String,
        reason: String,
    },
    #[error("{}", describe(.origin, .error))]
    Compile { origin: SqlOrigin, error: SqlError },
    #[error("{at}: {key}: a job with [pipeline] sql takes its sources, transforms and sinks from the SQL; remove [{key}] (or the SQL)")]
    Mixed { at: Location, key: String },
}

fn describe(origin: &SqlOrigin, e: &SqlError) -> String {
    let at = origin.location(e.line, e.column);
    match origin {
        SqlOrigin::File(_) => format!("{at}: {}", e.message),
        SqlOrigin::Inline(_) => format!("{at}: pipeline.sql: {}", e.message),
    }
}

impl SqlOrigin {
    /// Where line `line`, column `col` of the SQL is: in its `.sql` file, or in the job file
    /// that holds it inline.
    pub fn location(&self, line: u64, col: u64) -> Location {
        match self {
            SqlOrigin::File(path) => Location {
                file: path.display().to_string(),
                line_col: Some((line as usize, col as usize)),
            },
            SqlOrigin::Inline(at) => {
                let (first_line, first_col) = at.line_col.unwrap_or((1, 1));
                let file_line = first_line as u64 + line - 1;
                let file_col = if line == 1 {
                    first_col as u64 + col - 1
                } else {
                    col
                };
                Location {
                    file: at.file.clone(),
                    line_col: Some((file_line as usize, file_col as usize)),
                }
            }
        }
    }
}

/// A job's SQL compiled, and where that SQL is (to point problems at it).
#[derive(Debug, Clone)]
pub struct JobSql {
    pub compiled: super::Compiled,
    pub origin: SqlOrigin,
}

impl JobSql {
    /// Where the part at `key` (`transforms.NAME...`) comes from in the SQL, if it is one of the
    /// compiled parts.
    pub fn locate(&self, key: &KeyPath) -> Option<Location> {
        let (Some(crate::config::Seg::Key(section)), Some(crate::config::Seg::Key(name))) =
            (key.0.first(), key.0.get(1))
        else {
            return None;
        };
        let section: &'static str = match section.as_str() {
            "sources" => "sources",
            "transforms" => "transforms",
            "sinks" => "sinks",
            _ => return None,
        };
        let (line, col) = self.compiled.origins.get(&(section, name.clone()))?;
        Some(self.origin.location(*line, *col))
    }
}

/// The SQL a `pipeline.sql` value names: a path when it is one line ending in `.sql`, else the
/// text itself.
pub fn is_path(value: &str) -> bool {
    let v = value.trim();
    !v.contains('\n') && v.to_ascii_lowercase().ends_with(".sql")
}

/// Compiles the job's SQL into the typed tables of its sources, transforms and sinks, after
/// checking the job declares none of its own.
pub fn compile_job(
    sql: &str,
    src: &SourceText,
    counts: [(&str, usize); 3],
) -> Result<JobSql, JobSqlError> {
    for (key, n) in counts {
        if n > 0 {
            return Err(JobSqlError::Mixed {
                at: src.locate(&KeyPath::new([key])),
                key: key.to_string(),
            });
        }
    }
    let key = KeyPath::new(["pipeline", "sql"]);
    let (text, origin) = if is_path(sql) {
        let path = Path::new(sql.trim());
        let text = std::fs::read_to_string(path).map_err(|e| JobSqlError::Read {
            at: src.locate(&key),
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        (text, SqlOrigin::File(path.to_path_buf()))
    } else {
        (
            sql.to_string(),
            SqlOrigin::Inline(first_sql_line(src, &key)),
        )
    };
    match super::compile(&text) {
        Ok(compiled) => Ok(JobSql { compiled, origin }),
        Err(error) => Err(JobSqlError::Compile { origin, error }),
    }
}

/// Where line 1, column 1 of an inline SQL string is in the job file: after its opening quote,
/// or on the next line for a multi-line string that starts with a newline (TOML drops it).
fn first_sql_line(src: &SourceText, key: &KeyPath) -> Location {
    let Some(span) = src.entry(key).and_then(|e| e.value_span.clone()) else {
        return src.locate(key);
    };
    let mut at = src.location_of_offset(span.start);
    let Some((line, col)) = at.line_col else {
        return at;
    };
    let text = src.text_at(span);
    let quote = if text.starts_with("\"\"\"") || text.starts_with("'''") {
        3
    } else {
        1
    };
    let rest = &text[quote.min(text.len())..];
    at.line_col = if quote == 3 && (rest.starts_with('\n') || rest.starts_with("\r\n")) {
        Some((line + 1, 1))
    } else {
        Some((line, col + quote))
    };
    at
}
