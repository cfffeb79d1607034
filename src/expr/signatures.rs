//! The functions' names, arities and aliases: what `check` and `compile` look a call up in, and
//! the suggestion for a misspelt name. Their semantics are in `functions` (the core set) and
//! `builtins` (Flink's further built-ins).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Func {
    Coalesce,
    Try,
    Lower,
    Upper,
    StartsWith,
    EndsWith,
    Contains,
    Concat,
    Len,
    Abs,
    Round,
    Floor,
    Ceil,
    Min,
    Max,
    TruncateTime,
    FormatTime,
    SqlTimestamp,
    ToInt,
    ToDecimal,
    ToString,
    DateFormat,
    Substr,
    Trim,
    Replace,
    SplitIndex,
    Regexp,
    RegexpExtract,
    RegexpReplace,
    RegexpCount,
    RegexpInstr,
    RegexpSubstr,
    // Flink's further built-ins (`builtins`), called through `Op::Call`.
    ConcatWs,
    Elt,
    Lpad,
    Rpad,
    Repeat,
    Left,
    Right,
    Reverse,
    Initcap,
    Ltrim,
    Rtrim,
    Btrim,
    Locate,
    Ascii,
    Chr,
    Overlay,
    ParseUrl,
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512,
    Sha2,
    ToBase64,
    FromBase64,
    UrlEncode,
    UrlDecode,
    Hex,
    Bin,
    Div,
    Sign,
    Truncate,
    ParseTime,
    UnixTimestamp,
    ToDate,
    TimeAdd,
    TimeDiff,
    TimeField,
    FloorTime,
    CeilTime,
    Translate,
    IsAlpha,
    IsDigit,
    IsDecimal,
    InetAton,
    InetNtoa,
    JsonQuote,
    JsonUnquote,
    ToDouble,
    Power,
    Sqrt,
    Exp,
    Ln,
    Log,
    Log10,
    Log2,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Degrees,
    Radians,
}

/// A function's name and how many arguments it takes (`max: None` for any number).
pub(super) struct Signature {
    pub func: Func,
    pub name: &'static str,
    pub min: usize,
    pub max: Option<usize>,
}

const fn sig(func: Func, name: &'static str, min: usize, max: Option<usize>) -> Signature {
    Signature {
        func,
        name,
        min,
        max,
    }
}

pub(super) const FUNCTIONS: &[Signature] = &[
    sig(Func::Coalesce, "coalesce", 1, None),
    sig(Func::Try, "try", 1, Some(1)),
    sig(Func::Lower, "lower", 1, Some(1)),
    sig(Func::Upper, "upper", 1, Some(1)),
    sig(Func::StartsWith, "starts_with", 2, Some(2)),
    sig(Func::EndsWith, "ends_with", 2, Some(2)),
    sig(Func::Contains, "contains", 2, Some(2)),
    sig(Func::Concat, "concat", 1, None),
    sig(Func::Len, "len", 1, Some(1)),
    sig(Func::Abs, "abs", 1, Some(1)),
    sig(Func::Round, "round", 1, Some(2)),
    sig(Func::Floor, "floor", 1, Some(1)),
    sig(Func::Ceil, "ceil", 1, Some(1)),
    sig(Func::Min, "min", 1, None),
    sig(Func::Max, "max", 1, None),
    sig(Func::TruncateTime, "truncate_time", 2, Some(2)),
    sig(Func::FormatTime, "format_time", 1, Some(1)),
    sig(Func::SqlTimestamp, "sql_timestamp", 1, Some(1)),
    sig(Func::ToInt, "to_int", 1, Some(1)),
    sig(Func::ToDecimal, "to_decimal", 2, Some(2)),
    sig(Func::ToString, "to_string", 1, Some(1)),
    sig(Func::DateFormat, "date_format", 2, Some(2)),
    sig(Func::Substr, "substr", 2, Some(3)),
    sig(Func::Trim, "trim", 1, Some(1)),
    sig(Func::Replace, "replace", 3, Some(3)),
    sig(Func::SplitIndex, "split_index", 3, Some(3)),
    sig(Func::Regexp, "regexp", 2, Some(2)),
    sig(Func::RegexpExtract, "regexp_extract", 2, Some(3)),
    sig(Func::RegexpReplace, "regexp_replace", 3, Some(3)),
    sig(Func::RegexpCount, "regexp_count", 2, Some(2)),
    sig(Func::RegexpInstr, "regexp_instr", 2, Some(2)),
    sig(Func::RegexpSubstr, "regexp_substr", 2, Some(2)),
    sig(Func::ConcatWs, "concat_ws", 2, None),
    sig(Func::Elt, "elt", 2, None),
    sig(Func::Lpad, "lpad", 3, Some(3)),
    sig(Func::Rpad, "rpad", 3, Some(3)),
    sig(Func::Repeat, "repeat", 2, Some(2)),
    sig(Func::Left, "left", 2, Some(2)),
    sig(Func::Right, "right", 2, Some(2)),
    sig(Func::Reverse, "reverse", 1, Some(1)),
    sig(Func::Initcap, "initcap", 1, Some(1)),
    sig(Func::Ltrim, "ltrim", 1, Some(2)),
    sig(Func::Rtrim, "rtrim", 1, Some(2)),
    sig(Func::Btrim, "btrim", 1, Some(2)),
    sig(Func::Locate, "locate", 2, Some(3)),
    sig(Func::Ascii, "ascii", 1, Some(1)),
    sig(Func::Chr, "chr", 1, Some(1)),
    sig(Func::Overlay, "overlay", 3, Some(4)),
    sig(Func::ParseUrl, "parse_url", 2, Some(3)),
    sig(Func::Md5, "md5", 1, Some(1)),
    sig(Func::Sha1, "sha1", 1, Some(1)),
    sig(Func::Sha224, "sha224", 1, Some(1)),
    sig(Func::Sha256, "sha256", 1, Some(1)),
    sig(Func::Sha384, "sha384", 1, Some(1)),
    sig(Func::Sha512, "sha512", 1, Some(1)),
    sig(Func::Sha2, "sha2", 2, Some(2)),
    sig(Func::ToBase64, "to_base64", 1, Some(1)),
    sig(Func::FromBase64, "from_base64", 1, Some(1)),
    sig(Func::UrlEncode, "url_encode", 1, Some(1)),
    sig(Func::UrlDecode, "url_decode", 1, Some(1)),
    sig(Func::Hex, "hex", 1, Some(1)),
    sig(Func::Bin, "bin", 1, Some(1)),
    sig(Func::Div, "div", 2, Some(2)),
    sig(Func::Sign, "sign", 1, Some(1)),
    sig(Func::Truncate, "truncate", 1, Some(2)),
    sig(Func::ParseTime, "parse_time", 1, Some(2)),
    sig(Func::UnixTimestamp, "unix_timestamp", 1, Some(2)),
    sig(Func::ToDate, "to_date", 1, Some(2)),
    sig(Func::TimeAdd, "time_add", 3, Some(3)),
    sig(Func::TimeDiff, "time_diff", 3, Some(3)),
    sig(Func::TimeField, "time_field", 2, Some(2)),
    sig(Func::FloorTime, "floor_time", 2, Some(2)),
    sig(Func::CeilTime, "ceil_time", 2, Some(2)),
    sig(Func::Translate, "translate", 3, Some(3)),
    sig(Func::IsAlpha, "is_alpha", 1, Some(1)),
    sig(Func::IsDigit, "is_digit", 1, Some(1)),
    sig(Func::IsDecimal, "is_decimal", 1, Some(1)),
    sig(Func::InetAton, "inet_aton", 1, Some(1)),
    sig(Func::InetNtoa, "inet_ntoa", 1, Some(1)),
    sig(Func::JsonQuote, "json_quote", 1, Some(1)),
    sig(Func::JsonUnquote, "json_unquote", 1, Some(1)),
    sig(Func::ToDouble, "to_double", 1, Some(1)),
    sig(Func::Power, "power", 2, Some(2)),
    sig(Func::Sqrt, "sqrt", 1, Some(1)),
    sig(Func::Exp, "exp", 1, Some(1)),
    sig(Func::Ln, "ln", 1, Some(1)),
    sig(Func::Log, "log", 1, Some(2)),
    sig(Func::Log10, "log10", 1, Some(1)),
    sig(Func::Log2, "log2", 1, Some(1)),
    sig(Func::Sin, "sin", 1, Some(1)),
    sig(Func::Cos, "cos", 1, Some(1)),
    sig(Func::Tan, "tan", 1, Some(1)),
    sig(Func::Cot, "cot", 1, Some(1)),
    sig(Func::Asin, "asin", 1, Some(1)),
    sig(Func::Acos, "acos", 1, Some(1)),
    sig(Func::Atan, "atan", 1, Some(1)),
    sig(Func::Atan2, "atan2", 2, Some(2)),
    sig(Func::Sinh, "sinh", 1, Some(1)),
    sig(Func::Cosh, "cosh", 1, Some(1)),
    sig(Func::Tanh, "tanh", 1, Some(1)),
    sig(Func::Degrees, "degrees", 1, Some(1)),
    sig(Func::Radians, "radians", 1, Some(1)),
];

/// Names people reach for from other languages, and ours.
const ALIASES: &[(&str, &str)] = &[
    ("size", "len"),
    ("length", "len"),
    ("ifnull", "coalesce"),
    ("nvl", "coalesce"),
    ("least", "min"),
    ("greatest", "max"),
    ("startsWith", "starts_with"),
    ("endsWith", "ends_with"),
    ("date_trunc", "truncate_time"),
];

pub(super) fn lookup(name: &str) -> Option<&'static Signature> {
    FUNCTIONS.iter().find(|s| s.name == name)
}

impl Func {
    pub(super) fn name(self) -> &'static str {
        FUNCTIONS
            .iter()
            .find(|s| s.func == self)
            .map_or("?", |s| s.name)
    }
}

/// The known function closest to a misspelt `name`, if any is close.
pub(super) fn suggest(name: &str) -> Option<&'static str> {
    if let Some((_, ours)) = ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
    {
        return Some(ours);
    }
    let lowered = name.to_ascii_lowercase();
    FUNCTIONS
        .iter()
        .map(|s| (edit_distance(&lowered, s.name), s.name))
        .filter(|(distance, candidate)| *distance <= 2.min(candidate.len() / 3 + 1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}
