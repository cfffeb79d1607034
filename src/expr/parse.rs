//! A Pratt parser from tokens to the `ast`, with exact byte positions for every node.
//!
//! Precedence, loosest first (as in CEL): `?:` (right-assoc), `||`, `&&`, relations
//! (`== != < <= > >= in`), `+ -`, `* / %`, unary `- !`, then field access `a.b[0]` and calls.
//! Binary operators are left-associative. Trees deeper than `MAX_DEPTH` are rejected, so checking,
//! compiling and evaluating (all recursive) cannot overflow the stack on hostile text.

use rust_decimal::Decimal;

use super::ast::{BinOp, Expr, ExprKind, FieldPath, Segment, UnOp};
use super::error::{ExprError, ExprErrorKind};
use super::lex::{tokenize, Tok, Token};
use super::value::canonical;

const MAX_DEPTH: usize = 128;

/// Parses a whole expression.
pub(super) fn parse(text: &str) -> Result<Expr, ExprError> {
    let mut parser = Parser::new(text)?;
    let expr = parser.expr()?;
    parser.expect_end()?;
    Ok(expr)
}

/// Parses a field path such as `payload.items[0].sku`.
pub(super) fn parse_path(text: &str) -> Result<FieldPath, ExprError> {
    let mut parser = Parser::new(text)?;
    let pos = parser.pos();
    let path = match parser.bump().tok {
        Tok::Ident(name) => parser.path(name)?,
        other => {
            return Err(parser.error(
                pos,
                format!("expected a field name, found {}", other.describe()),
            ))
        }
    };
    parser.expect_end()?;
    Ok(path)
}

struct Parser<'t> {
    text: &'t str,
    tokens: Vec<Token<'t>>,
    next: usize,
    depth: usize,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str) -> Result<Self, ExprError> {
        let tokens = tokenize(text)
            .map_err(|(pos, message)| ExprError::new(ExprErrorKind::Syntax, text, pos, message))?;
        Ok(Self {
            text,
            tokens,
            next: 0,
            depth: 0,
        })
    }

    fn peek(&self) -> &Tok<'t> {
        // `tokenize` always ends with `Eof` and `bump` never moves past it.
        &self.tokens[self.next.min(self.tokens.len() - 1)].tok
    }

    fn pos(&self) -> usize {
        self.tokens[self.next.min(self.tokens.len() - 1)].pos
    }

    fn bump(&mut self) -> Token<'t> {
        let token = self.tokens[self.next.min(self.tokens.len() - 1)].clone();
        if self.next < self.tokens.len() - 1 {
            self.next += 1;
        }
        token
    }

    fn error(&self, pos: usize, message: String) -> ExprError {
        ExprError::new(ExprErrorKind::Syntax, self.text, pos, message)
    }

    fn unexpected(&self, expected: &str) -> ExprError {
        let found = self.peek().describe();
        self.error(self.pos(), format!("expected {expected}, found {found}"))
    }

    fn expect(&mut self, tok: Tok<'_>, expected: &str) -> Result<(), ExprError> {
        if *self.peek() == tok {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_end(&mut self) -> Result<(), ExprError> {
        match self.peek() {
            Tok::Eof => Ok(()),
            Tok::Dot | Tok::LBracket => Err(self.error(
                self.pos(),
                "field access is only allowed on field names".to_owned(),
            )),
            _ => Err(self.unexpected("an operator or the end of the expression")),
        }
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.too_deep());
        }
        Ok(())
    }

    fn too_deep(&self) -> ExprError {
        let message = format!("the expression nests more than {MAX_DEPTH} levels deep");
        self.error(self.pos(), message)
    }

    /// expr := binary ('?' expr ':' expr)?
    fn expr(&mut self) -> Result<Expr, ExprError> {
        self.enter()?;
        let cond = self.binary(0)?;
        let result = if *self.peek() == Tok::Question {
            let pos = self.bump().pos;
            let then = self.expr()?;
            self.expect(Tok::Colon, "`:` of the ternary `cond ? a : b`")?;
            let otherwise = self.expr()?;
            let kind = ExprKind::Cond(Box::new(cond), Box::new(then), Box::new(otherwise));
            Expr { kind, pos }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(result)
    }

    /// Binary operators binding tighter than `min_power`, left-associative.
    fn binary(&mut self, min_power: u8) -> Result<Expr, ExprError> {
        let mut lhs = self.unary()?;
        let mut chain = 0;
        loop {
            let (op, power) = match self.peek() {
                Tok::OrOr => (Some(BinOp::Or), 1),
                Tok::AndAnd => (Some(BinOp::And), 2),
                Tok::EqEq => (Some(BinOp::Eq), 3),
                Tok::NotEq => (Some(BinOp::Ne), 3),
                Tok::Lt => (Some(BinOp::Lt), 3),
                Tok::Le => (Some(BinOp::Le), 3),
                Tok::Gt => (Some(BinOp::Gt), 3),
                Tok::Ge => (Some(BinOp::Ge), 3),
                Tok::Ident("in") => (None, 3),
                Tok::Plus => (Some(BinOp::Add), 4),
                Tok::Minus => (Some(BinOp::Sub), 4),
                Tok::Star => (Some(BinOp::Mul), 5),
                Tok::Slash => (Some(BinOp::Div), 5),
                Tok::Percent => (Some(BinOp::Rem), 5),
                _ => break,
            };
            if power <= min_power {
                break;
            }
            // Each loop turn puts the tree so far one level deeper.
            chain += 1;
            if self.depth + chain > MAX_DEPTH {
                return Err(self.too_deep());
            }
            let pos = self.bump().pos;
            let kind = match op {
                Some(op) => ExprKind::Binary(op, Box::new(lhs), Box::new(self.binary(power)?)),
                None => ExprKind::In(Box::new(lhs), self.list()?),
            };
            lhs = Expr { kind, pos };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        self.enter()?;
        let pos = self.pos();
        let expr = match self.peek() {
            Tok::Minus => {
                self.bump();
                if let Tok::Number { text, is_decimal } = *self.peek() {
                    // Negative literals directly, so `-9223372036854775808` is an i64.
                    self.bump();
                    self.number(pos, text, is_decimal, true)?
                } else {
                    let operand = self.unary()?;
                    Expr {
                        kind: ExprKind::Unary(UnOp::Neg, Box::new(operand)),
                        pos,
                    }
                }
            }
            Tok::Bang => {
                self.bump();
                let operand = self.unary()?;
                Expr {
                    kind: ExprKind::Unary(UnOp::Not, Box::new(operand)),
                    pos,
                }
            }
            _ => self.primary()?,
        };
        self.depth -= 1;
        Ok(expr)
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let pos = self.pos();
        let kind = match self.bump().tok {
            Tok::Number { text, is_decimal } => return self.number(pos, text, is_decimal, false),
            Tok::Str(value) => ExprKind::Str(value),
            Tok::Ident("true") => ExprKind::Bool(true),
            Tok::Ident("false") => ExprKind::Bool(false),
            Tok::Ident("null") => ExprKind::Null,
            Tok::Ident("in") => {
                return Err(self.error(pos, "expected a value, found `in`".to_owned()))
            }
            Tok::Ident(name) if *self.peek() == Tok::LParen => {
                self.bump();
                ExprKind::Call(name.to_owned(), self.items(Tok::RParen, "`,` or `)`")?)
            }
            Tok::Ident(name) => ExprKind::Field(self.path(name)?),
            Tok::LParen => {
                let inner = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                return Ok(inner);
            }
            Tok::LBracket => {
                let message = "a list in brackets is only allowed after `in`".to_owned();
                return Err(self.error(pos, message));
            }
            other => {
                let message = format!("expected a value, found {}", other.describe());
                return Err(self.error(pos, message));
            }
        };
        Ok(Expr { kind, pos })
    }

    /// The rest of a field path whose first name was just read.
    fn path(&mut self, first: &str) -> Result<FieldPath, ExprError> {
        let mut segments = vec![Segment::Key(first.to_owned())];
        loop {
            match self.peek() {
                Tok::Dot => {
                    self.bump();
                    match self.peek() {
                        Tok::Ident(name) => {
                            segments.push(Segment::Key((*name).to_owned()));
                            self.bump();
                        }
                        _ => return Err(self.unexpected("a field name after `.`")),
                    }
                    if *self.peek() == Tok::LParen {
                        let message =
                            "methods are not supported; call functions like `lower(x)`".to_owned();
                        return Err(self.error(self.pos(), message));
                    }
                }
                Tok::LBracket => {
                    self.bump();
                    let pos = self.pos();
                    let index = match self.peek() {
                        Tok::Number {
                            text,
                            is_decimal: false,
                        } => text.parse::<usize>().ok(),
                        _ => None,
                    };
                    let Some(index) = index else {
                        let message = "an index must be a non-negative integer literal".to_owned();
                        return Err(self.error(pos, message));
                    };
                    self.bump();
                    segments.push(Segment::Index(index));
                    self.expect(Tok::RBracket, "`]`")?;
                }
                _ => break,
            }
        }
        // The first segment is a key, so this cannot fail.
        FieldPath::new(segments)
            .ok_or_else(|| self.error(self.pos(), "empty field path".to_owned()))
    }

    /// `[a, b, c]` after `in`.
    fn list(&mut self) -> Result<Vec<Expr>, ExprError> {
        if *self.peek() != Tok::LBracket {
            let message = "`in` needs a list in brackets, like `x in [1, 2]`".to_owned();
            return Err(self.error(self.pos(), message));
        }
        self.bump();
        self.items(Tok::RBracket, "`,` or `]`")
    }

    /// Comma-separated expressions up to and including `close`; the opener is already read.
    fn items(&mut self, close: Tok<'static>, expected: &str) -> Result<Vec<Expr>, ExprError> {
        let mut items = Vec::new();
        if *self.peek() == close {
            self.bump();
            return Ok(items);
        }
        loop {
            items.push(self.expr()?);
            if *self.peek() == Tok::Comma {
                self.bump();
            } else if *self.peek() == close {
                self.bump();
                return Ok(items);
            } else {
                return Err(self.unexpected(expected));
            }
        }
    }

    fn number(
        &self,
        pos: usize,
        text: &str,
        is_decimal: bool,
        negative: bool,
    ) -> Result<Expr, ExprError> {
        let full = if negative {
            format!("-{text}")
        } else {
            text.to_owned()
        };
        let kind = if is_decimal {
            match Decimal::from_str_exact(&full) {
                Ok(value) => ExprKind::Dec(canonical(value)),
                Err(_) => {
                    let message =
                        format!("the decimal `{full}` does not fit 28 significant digits");
                    return Err(ExprError::new(
                        ExprErrorKind::Constant,
                        self.text,
                        pos,
                        message,
                    ));
                }
            }
        } else {
            match full.parse::<i64>() {
                Ok(value) => ExprKind::Int(value),
                Err(_) => {
                    let message = format!(
                        "the integer `{full}` is out of the 64-bit range; write `{full}.0` for a decimal"
                    );
                    return Err(ExprError::new(
                        ExprErrorKind::Constant,
                        self.text,
                        pos,
                        message,
                    ));
                }
            }
        };
        Ok(Expr { kind, pos })
    }
}
