//! Tokens of the expression language, each with the byte offset where it starts.
//!
//! Numbers keep their text, so `parse` decides between `i64` and exact decimal (and can read
//! `-9223372036854775808`); strings are unescaped here. Keywords (`true`, `false`, `null`, `in`)
//! come out as identifiers and `parse` tells them apart. Identifiers may use letters of any script.

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok<'t> {
    Ident(&'t str),
    /// Digits, with `.digits` when `is_decimal`.
    Number {
        text: &'t str,
        is_decimal: bool,
    },
    Str(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Question,
    Colon,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
    Bang,
    Eof,
}

impl Tok<'_> {
    /// How the token reads in an error message.
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::Ident(name) => format!("`{name}`"),
            Tok::Number { text, .. } => format!("number `{text}`"),
            Tok::Str(_) => "a string".to_owned(),
            Tok::Eof => "the end of the expression".to_owned(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Dot => ".",
            Tok::Question => "?",
            Tok::Colon => ":",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Bang => "!",
            Tok::Ident(_) | Tok::Number { .. } | Tok::Str(_) | Tok::Eof => "",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Token<'t> {
    pub tok: Tok<'t>,
    pub pos: usize,
}

/// A lexing error: byte offset and message.
pub(super) type LexError = (usize, String);

/// Splits `text` into tokens, ending with `Tok::Eof`.
pub(super) fn tokenize(text: &str) -> Result<Vec<Token<'_>>, LexError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let two = |second: u8| bytes.get(i + 1) == Some(&second);
        let (tok, len) = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            _ if starts_identifier(&text[i..]) => {
                let len = text[i..]
                    .char_indices()
                    .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
                    .map_or(text.len() - i, |(at, _)| at);
                (Tok::Ident(&text[i..i + len]), len)
            }
            b'0'..=b'9' => {
                let mut end = scan_while(bytes, i, |b| b.is_ascii_digit());
                let is_decimal = bytes.get(end) == Some(&b'.')
                    && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
                if is_decimal {
                    end = scan_while(bytes, end + 1, |b| b.is_ascii_digit());
                }
                if starts_identifier(&text[end..]) {
                    return Err((start, "a number must not run into letters".to_owned()));
                }
                let text = &text[i..end];
                (Tok::Number { text, is_decimal }, end - i)
            }
            b'\'' | b'"' => {
                let (value, end) = string(text, i)?;
                (Tok::Str(value), end - i)
            }
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b'[' => (Tok::LBracket, 1),
            b']' => (Tok::RBracket, 1),
            b',' => (Tok::Comma, 1),
            b'.' => (Tok::Dot, 1),
            b'?' => (Tok::Question, 1),
            b':' => (Tok::Colon, 1),
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'*' => (Tok::Star, 1),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'=' if two(b'=') => (Tok::EqEq, 2),
            b'!' if two(b'=') => (Tok::NotEq, 2),
            b'<' if two(b'=') => (Tok::Le, 2),
            b'>' if two(b'=') => (Tok::Ge, 2),
            b'&' if two(b'&') => (Tok::AndAnd, 2),
            b'|' if two(b'|') => (Tok::OrOr, 2),
            b'!' => (Tok::Bang, 1),
            b'<' => (Tok::Lt, 1),
            b'>' => (Tok::Gt, 1),
            b'=' => return Err((start, "unexpected `=`; compare with `==`".to_owned())),
            b'&' => return Err((start, "unexpected `&`; use `&&` for and".to_owned())),
            b'|' => return Err((start, "unexpected `|`; use `||` for or".to_owned())),
            _ => {
                let c = text[i..].chars().next().unwrap_or('?');
                return Err((start, format!("unexpected character `{c}`")));
            }
        };
        tokens.push(Token { tok, pos: start });
        i += len;
    }
    tokens.push(Token {
        tok: Tok::Eof,
        pos: text.len(),
    });
    Ok(tokens)
}

/// Identifiers start with a letter (any script) or `_` and go on with letters, digits and `_`.
fn starts_identifier(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

fn scan_while(bytes: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
    while i < bytes.len() && keep(bytes[i]) {
        i += 1;
    }
    i
}

/// Reads the string literal whose opening quote is at `start`; returns its value and the offset
/// just past the closing quote. Escapes: `\\ \' \" \n \r \t \0 \uXXXX`.
fn string(text: &str, start: usize) -> Result<(String, usize), LexError> {
    let quote = text.as_bytes()[start] as char;
    let mut value = String::new();
    let mut chars = text[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        let at = start + 1 + offset;
        if c == quote {
            return Ok((value, at + 1));
        }
        if c != '\\' {
            value.push(c);
            continue;
        }
        let escaped = match chars.next() {
            Some((_, 'n')) => '\n',
            Some((_, 'r')) => '\r',
            Some((_, 't')) => '\t',
            Some((_, '0')) => '\0',
            Some((_, c @ ('\\' | '\'' | '"'))) => c,
            Some((_, 'u')) => {
                let hex: String = chars.by_ref().take(4).map(|(_, c)| c).collect();
                let is_hex = hex.len() == 4 && hex.chars().all(|c| c.is_ascii_hexdigit());
                let code = is_hex
                    .then(|| u32::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32);
                match code {
                    Some(c) => c,
                    None => {
                        let message = "`\\u` needs four hex digits naming a Unicode scalar value";
                        return Err((at, message.to_owned()));
                    }
                }
            }
            Some((_, other)) => return Err((at, format!("unknown escape `\\{other}`"))),
            None => break,
        };
        value.push(escaped);
    }
    Err((start, "unterminated string".to_owned()))
}
