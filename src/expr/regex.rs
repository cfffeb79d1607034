//! The regular-expression functions, Flink's REGEXP, REGEXP_EXTRACT and REGEXP_REPLACE:
//! `regexp(s, 'p')` (true if some substring of `s` matches), `regexp_extract(s, 'p'[, group])`
//! (the group of the first match, 0 the whole match; null when nothing matches, the group does
//! not exist or did not take part) and `regexp_replace(s, 'p', 'r')` (every match replaced by
//! `r` as written: Flink quotes it, so `$1` is not a group). The pattern is a string literal, compiled
//! once with the expression: a record never pays for it, and a bad pattern is refused before
//! anything runs. Matching is linear in the input (Rust's `regex`), so no pattern can hang a
//! shard; the price is that Java's backreferences and look-around are refused.

use std::borrow::Cow;

use super::functions::Func;
use super::ops::{type_error, OpResult};
use super::value::Value;

/// Compiled patterns may take this much memory at most (a pattern past it is refused).
const SIZE_LIMIT: usize = 1 << 20;

/// Whether `func` takes a pattern as its second argument.
pub(super) fn is_regex(func: Func) -> bool {
    matches!(
        func,
        Func::Regexp
            | Func::RegexpExtract
            | Func::RegexpReplace
            | Func::RegexpCount
            | Func::RegexpInstr
            | Func::RegexpSubstr
    )
}

/// Compiles a pattern, or says why it cannot be.
pub(super) fn compile(pattern: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => {
                format!("the pattern compiles to more than {SIZE_LIMIT} bytes")
            }
            other => format!(
                "not a regular expression sluice takes (Java's syntax without backreferences or look-around): {}",
                other.to_string().lines().last().unwrap_or("")
            ),
        })
}

/// Runs `func` with its compiled pattern on the string `s` and its third argument, if any
/// (the group or the replacement).
pub(super) fn call<'a>(
    func: Func,
    re: &regex::Regex,
    s: Value<'a>,
    extra: Option<Value<'a>>,
) -> OpResult<'a> {
    let name = func.name();
    let text = match &s {
        Value::Str(t) => Some(t.as_ref()),
        Value::Null => None,
        other => return Err(type_error(name, 0, "a string", other)),
    };
    match func {
        Func::RegexpExtract => {
            let group = match extra {
                None => Some(0),
                Some(Value::Int(g)) => Some(g),
                Some(Value::Null) => None,
                Some(other) => return Err(type_error(name, 2, "an int", &other)),
            };
            let (Some(text), Some(group)) = (text, group) else {
                return Ok(Value::Null);
            };
            let found = usize::try_from(group)
                .ok()
                .and_then(|g| re.captures(text).and_then(|c| c.get(g)));
            Ok(found.map_or(Value::Null, |m| {
                Value::Str(Cow::Owned(m.as_str().to_string()))
            }))
        }
        Func::RegexpReplace => {
            let with = match extra {
                Some(Value::Str(r)) => Some(r),
                Some(Value::Null) | None => None,
                Some(other) => return Err(type_error(name, 2, "a string", &other)),
            };
            let (Some(text), Some(with)) = (text, with) else {
                return Ok(Value::Null);
            };
            // Flink quotes the replacement (`Matcher.quoteReplacement`): `$1` is two characters.
            Ok(Value::Str(Cow::Owned(
                re.replace_all(text, regex::NoExpand(&with)).into_owned(),
            )))
        }
        // Flink's REGEXP_COUNT, REGEXP_INSTR (the 1-based character position of the first
        // match, 0 for none) and REGEXP_SUBSTR (the first match, NULL for none).
        Func::RegexpCount => {
            Ok(text.map_or(Value::Null, |t| Value::Int(re.find_iter(t).count() as i64)))
        }
        Func::RegexpInstr => Ok(text.map_or(Value::Null, |t| {
            Value::Int(
                re.find(t)
                    .map_or(0, |m| t[..m.start()].chars().count() as i64 + 1),
            )
        })),
        Func::RegexpSubstr => Ok(text.and_then(|t| re.find(t)).map_or(Value::Null, |m| {
            Value::Str(Cow::Owned(m.as_str().to_string()))
        })),
        _ => Ok(text.map_or(Value::Null, |t| Value::Bool(re.is_match(t)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(func: Func, pattern: &str, args: Vec<Value<'static>>) -> Value<'static> {
        let re = compile(pattern).unwrap();
        let mut args = args.into_iter();
        let s = args.next().unwrap_or(Value::Null);
        call(func, &re, s, args.next()).unwrap().into_owned()
    }

    fn s(t: &'static str) -> Value<'static> {
        Value::str(t)
    }

    #[test]
    fn extract_follows_flink() {
        let url = "https://www.nexmark.com/x?a=1&channel_id=1234&b=2";
        let p = "(&|^)channel_id=([^&]*)";
        let ex = |args| run(Func::RegexpExtract, p, args);
        assert_eq!(ex(vec![s(url), Value::Int(2)]), s("1234"));
        assert_eq!(ex(vec![s(url), Value::Int(0)]), s("&channel_id=1234"));
        assert_eq!(
            ex(vec![s(url)]),
            s("&channel_id=1234"),
            "group 0 by default"
        );
        assert_eq!(ex(vec![s("no id here"), Value::Int(2)]), Value::Null);
        assert_eq!(ex(vec![s(url), Value::Int(3)]), Value::Null, "no group 3");
        assert_eq!(ex(vec![s(url), Value::Int(-1)]), Value::Null);
        assert_eq!(ex(vec![Value::Null, Value::Int(2)]), Value::Null);
        assert_eq!(ex(vec![s(url), Value::Null]), Value::Null);
        // A group that did not take part in the match.
        let opt = run(Func::RegexpExtract, "a(x)?b", vec![s("ab"), Value::Int(1)]);
        assert_eq!(opt, Value::Null);
        assert_eq!(
            run(
                Func::RegexpExtract,
                "foo(.*?)(bar)",
                vec![s("foothebar"), Value::Int(2)]
            ),
            s("bar")
        );
    }

    #[test]
    fn matches_and_replaces() {
        assert_eq!(run(Func::Regexp, "b+", vec![s("abbc")]), Value::Bool(true));
        assert_eq!(run(Func::Regexp, "^b", vec![s("abbc")]), Value::Bool(false));
        assert_eq!(run(Func::Regexp, "x*", vec![s("")]), Value::Bool(true));
        assert_eq!(run(Func::Regexp, "b", vec![Value::Null]), Value::Null);
        let rep = |p, t, r| run(Func::RegexpReplace, p, vec![s(t), s(r)]);
        assert_eq!(rep("o", "foobar", "0"), s("f00bar"));
        assert_eq!(rep("^https://|/.*$", "https://h.com/a/b", ""), s("h.com"));
        // As Flink (checked against Flink 2.3): the replacement is literal text.
        assert_eq!(rep("(\\w+)@(\\w+)", "me@host", "$2 at $1"), s("$2 at $1"));
        assert_eq!(rep("a", "a", "\\$"), s("\\$"));
        assert_eq!(
            run(Func::RegexpReplace, "a", vec![s("a"), Value::Null]),
            Value::Null
        );
    }

    #[test]
    fn wrong_types_and_bad_patterns_are_errors() {
        let re = compile("a").unwrap();
        assert!(call(Func::Regexp, &re, Value::Int(1), None).is_err());
        assert!(call(Func::RegexpExtract, &re, s("a"), Some(s("1"))).is_err());
        assert!(compile("(a")
            .unwrap_err()
            .contains("not a regular expression"));
        assert!(compile("(a)\\1").is_err(), "backreferences are refused");
        assert!(compile("a(?=b)").is_err(), "look-ahead is refused");
        assert!(compile("(a{1000}){1000}")
            .unwrap_err()
            .contains("more than"));
    }
}
