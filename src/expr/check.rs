//! Static checks run when compiling: unknown functions (with a suggestion), arity, and type
//! errors that the literals alone already prove (`'a' * 2`, `!5`, `1 == 'x'`).
//!
//! Fields have an unknown type ([`Type::Any`]), so the checker never rejects an expression that
//! could succeed on some record; the run-time checks in `ops`/`functions` stay authoritative.

use super::ast::{BinOp, Expr, ExprKind, UnOp};
use super::builtins::{self, Ret, Want};
use super::error::{ExprError, ExprErrorKind};
use super::functions::{lookup, suggest, Func};
use super::time;

/// The static type of an expression: the type of its value when that is not null. `Null` means
/// always null, `Number` an int or a decimal, `Any` unknown (it reads fields whose type is only
/// known per record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Null,
    Bool,
    Int,
    Decimal,
    Number,
    String,
    Any,
}

/// Coarse classes: what an operator accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Null,
    Bool,
    Num,
    Str,
    Any,
}

impl Type {
    fn class(self) -> Class {
        match self {
            Type::Null => Class::Null,
            Type::Bool => Class::Bool,
            Type::Int | Type::Decimal | Type::Number => Class::Num,
            Type::String => Class::Str,
            Type::Any => Class::Any,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Type::Null => "null",
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Decimal => "decimal",
            Type::Number => "number",
            Type::String => "string",
            Type::Any => "any",
        }
    }

    /// The type of a value that is one of `self` or `other`.
    fn join(self, other: Type) -> Type {
        match (self, other) {
            (a, b) if a == b => a,
            (Type::Null, t) | (t, Type::Null) => t,
            (a, b) if a.class() == Class::Num && b.class() == Class::Num => Type::Number,
            _ => Type::Any,
        }
    }
}

/// The start of an expression in the text (the operator position is kept in `pos`).
pub(super) fn start(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Binary(_, lhs, _) | ExprKind::In(lhs, _) | ExprKind::Cond(lhs, _, _) => {
            start(lhs)
        }
        _ => e.pos,
    }
}

/// Checks `expr` (parsed from `text`) and returns its static type.
pub(super) fn check(text: &str, expr: &Expr) -> Result<Type, ExprError> {
    Checker { text }.ty(expr)
}

struct Checker<'t> {
    text: &'t str,
}

impl Checker<'_> {
    fn error(&self, kind: ExprErrorKind, pos: usize, message: String) -> ExprError {
        ExprError::new(kind, self.text, pos, message)
    }

    /// Fails unless `e`, of type `t`, may be of class `want` (or null, or unknown).
    fn expect(
        &self,
        op: &str,
        e: &Expr,
        t: Type,
        want: &[Class],
        expected: &str,
    ) -> Result<(), ExprError> {
        let class = t.class();
        if class == Class::Null || class == Class::Any || want.contains(&class) {
            return Ok(());
        }
        let message = format!("`{op}` needs {expected}, got {}", t.name());
        Err(self.error(ExprErrorKind::Type, start(e), message))
    }

    /// Fails when `a` and `b` are known to be of classes that never compare.
    fn comparable(&self, op: &str, a: Type, b: Type, b_expr: &Expr) -> Result<(), ExprError> {
        let (ca, cb) = (a.class(), b.class());
        let unknown = |c| c == Class::Null || c == Class::Any;
        if unknown(ca) || unknown(cb) || ca == cb {
            return Ok(());
        }
        let message = format!("`{op}` cannot compare {} with {}", a.name(), b.name());
        Err(self.error(ExprErrorKind::Type, start(b_expr), message))
    }

    fn ty(&self, e: &Expr) -> Result<Type, ExprError> {
        use Class::{Bool, Num};
        Ok(match &e.kind {
            ExprKind::Null => Type::Null,
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Int(_) => Type::Int,
            ExprKind::Dec(_) => Type::Decimal,
            ExprKind::Str(_) => Type::String,
            ExprKind::Field(_) => Type::Any,
            ExprKind::Unary(UnOp::Neg, x) => {
                let t = self.ty(x)?;
                self.expect("-", x, t, &[Num], "a number")?;
                numeric(t, t)
            }
            ExprKind::Unary(UnOp::Not, x) => {
                let t = self.ty(x)?;
                self.expect("!", x, t, &[Bool], "a bool")?;
                if t == Type::Null {
                    Type::Null
                } else {
                    Type::Bool
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (ta, tb) = (self.ty(a)?, self.ty(b)?);
                self.binary(*op, (a, ta), (b, tb))?
            }
            ExprKind::In(x, list) => {
                let tx = self.ty(x)?;
                for item in list {
                    let ti = self.ty(item)?;
                    self.comparable("in", tx, ti, item)?;
                }
                if tx == Type::Null {
                    Type::Null
                } else {
                    Type::Bool
                }
            }
            ExprKind::Cond(cond, then, otherwise) => {
                let tc = self.ty(cond)?;
                self.expect("?:", cond, tc, &[Bool], "a bool condition")?;
                self.ty(then)?.join(self.ty(otherwise)?)
            }
            ExprKind::Call(name, args) => self.call(e.pos, name, args)?,
        })
    }

    fn binary(
        &self,
        op: BinOp,
        (a, ta): (&Expr, Type),
        (b, tb): (&Expr, Type),
    ) -> Result<Type, ExprError> {
        use Class::{Bool, Num, Str};
        let symbol = op.symbol();
        let either_null = ta == Type::Null || tb == Type::Null;
        Ok(match op {
            BinOp::Add => {
                for (e, t) in [(a, ta), (b, tb)] {
                    self.expect(symbol, e, t, &[Num, Str], "a number or a string")?;
                }
                self.comparable(symbol, ta, tb, b).map_err(|mut err| {
                    err.message = format!(
                        "`+` needs two numbers or two strings, got {} and {}",
                        ta.name(),
                        tb.name()
                    );
                    err
                })?;
                match (ta.class(), tb.class()) {
                    _ if either_null => Type::Null,
                    (Class::Str, _) | (_, Class::Str) => Type::String,
                    (Class::Num, Class::Num) => numeric(ta, tb),
                    (Class::Num, _) | (_, Class::Num)
                        if ta == Type::Decimal || tb == Type::Decimal =>
                    {
                        Type::Decimal
                    }
                    (Class::Num, _) | (_, Class::Num) => Type::Number,
                    _ => Type::Any,
                }
            }
            BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                for (e, t) in [(a, ta), (b, tb)] {
                    self.expect(symbol, e, t, &[Num], "a number")?;
                }
                match numeric(ta, tb) {
                    _ if either_null => Type::Null,
                    Type::Int if op == BinOp::Div => Type::Number,
                    t => t,
                }
            }
            BinOp::Eq | BinOp::Ne => {
                self.comparable(symbol, ta, tb, b)?;
                if either_null {
                    Type::Null
                } else {
                    Type::Bool
                }
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                for (e, t) in [(a, ta), (b, tb)] {
                    self.expect(symbol, e, t, &[Num, Str], "a number or a string")?;
                }
                self.comparable(symbol, ta, tb, b)?;
                if either_null {
                    Type::Null
                } else {
                    Type::Bool
                }
            }
            BinOp::And | BinOp::Or => {
                for (e, t) in [(a, ta), (b, tb)] {
                    self.expect(symbol, e, t, &[Bool], "a bool")?;
                }
                if ta == Type::Null && tb == Type::Null {
                    Type::Null
                } else {
                    Type::Bool
                }
            }
        })
    }

    fn call(&self, pos: usize, name: &str, args: &[Expr]) -> Result<Type, ExprError> {
        use Class::{Num, Str};
        let Some(signature) = lookup(name) else {
            let hint = suggest(name)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            let message = format!("unknown function `{name}`{hint}");
            return Err(self.error(ExprErrorKind::UnknownFunction, pos, message));
        };
        let count = args.len();
        if count < signature.min || signature.max.is_some_and(|max| count > max) {
            let wanted = match signature.max {
                Some(max) if max == signature.min => format!("{max}"),
                Some(max) => format!("{} or {max}", signature.min),
                None => format!("at least {}", signature.min),
            };
            let plural = if wanted.ends_with('1') { "" } else { "s" };
            let message = format!("`{name}` takes {wanted} argument{plural}, got {count}");
            return Err(self.error(ExprErrorKind::Arity, pos, message));
        }
        let types = args
            .iter()
            .map(|a| self.ty(a))
            .collect::<Result<Vec<_>, _>>()?;
        let any_null = types.contains(&Type::Null);
        let null_or = |t| if any_null { Type::Null } else { t };
        let want = |i: usize, class: Class, expected: &str| {
            self.expect(name, &args[i], types[i], &[class], expected)
        };
        if let Some(spec) = builtins::spec_of(signature.func) {
            return self.builtin(name, args, &types, &spec);
        }
        Ok(match signature.func {
            Func::Coalesce => types.iter().fold(Type::Null, |acc, t| acc.join(*t)),
            Func::Try => types[0],
            Func::Concat => null_or(Type::String),
            Func::Lower | Func::Upper | Func::Len => {
                want(0, Str, "a string")?;
                null_or(if signature.func == Func::Len {
                    Type::Int
                } else {
                    Type::String
                })
            }
            Func::StartsWith | Func::EndsWith | Func::Contains => {
                want(0, Str, "a string")?;
                want(1, Str, "a string")?;
                null_or(Type::Bool)
            }
            Func::Abs | Func::Floor | Func::Ceil | Func::Round => {
                want(0, Num, "a number")?;
                if let Some(digits) = args.get(1) {
                    want(1, Num, "an int")?;
                    self.round_digits(name, digits, types[1])?;
                }
                null_or(numeric(types[0], types[0]))
            }
            Func::Min | Func::Max => {
                for i in 0..count {
                    want(i, Num, "a number or a string")
                        .or_else(|_| want(i, Str, "a number or a string"))?;
                    self.comparable(name, types[0], types[i], &args[i])?;
                }
                null_or(types.iter().fold(Type::Null, |acc, t| acc.join(*t)))
            }
            Func::TruncateTime => {
                want(0, Num, "an int (epoch milliseconds)")?;
                self.not_decimal(name, &args[0], types[0])?;
                want(1, Str, "a string")?;
                if let ExprKind::Str(unit) = &args[1].kind {
                    if time::unit_ms(unit).is_none() {
                        let message = format!("unknown time unit `{unit}` (expected 'second', 'minute', 'hour' or 'day')");
                        return Err(self.error(ExprErrorKind::Type, args[1].pos, message));
                    }
                }
                null_or(Type::Int)
            }
            Func::DateFormat => {
                want(0, Num, "an int (epoch milliseconds)")?;
                self.not_decimal(name, &args[0], types[0])?;
                want(1, Str, "a string")?;
                if let ExprKind::Str(p) = &args[1].kind {
                    if !time::date_pattern_ok(p) {
                        let message = format!("date pattern `{p}`: expected the letters y, M, d, H, m, s, S (up to SSS) and 'quoted text'");
                        return Err(self.error(ExprErrorKind::Type, args[1].pos, message));
                    }
                }
                null_or(Type::String)
            }
            Func::Trim => {
                want(0, Str, "a string")?;
                null_or(Type::String)
            }
            Func::Substr => {
                want(0, Str, "a string")?;
                want(1, Num, "an int")?;
                if count == 3 {
                    want(2, Num, "an int")?;
                }
                null_or(Type::String)
            }
            Func::Replace => {
                for i in 0..3 {
                    want(i, Str, "a string")?;
                }
                null_or(Type::String)
            }
            Func::Regexp
            | Func::RegexpExtract
            | Func::RegexpReplace
            | Func::RegexpCount
            | Func::RegexpInstr
            | Func::RegexpSubstr => {
                want(0, Str, "a string")?;
                // The pattern itself is compiled (and refused) once, when the call is lowered.
                if !matches!(args[1].kind, ExprKind::Str(_)) {
                    let message = format!("the pattern of `{name}` must be a string literal: it is compiled once, with the expression");
                    return Err(self.error(ExprErrorKind::Type, args[1].pos, message));
                }
                match signature.func {
                    Func::Regexp => null_or(Type::Bool),
                    Func::RegexpCount | Func::RegexpInstr => null_or(Type::Int),
                    // Null also where nothing matches.
                    Func::RegexpSubstr => Type::String,
                    Func::RegexpExtract => {
                        if count == 3 {
                            want(2, Num, "an int")?;
                        }
                        // Null also where nothing matches: never proven non-null.
                        Type::String
                    }
                    _ => {
                        want(2, Str, "a string")?;
                        null_or(Type::String)
                    }
                }
            }
            Func::SplitIndex => {
                want(0, Str, "a string")?;
                want(1, Str, "a string")?;
                want(2, Num, "an int")?;
                null_or(Type::String)
            }
            Func::ToInt => null_or(Type::Int),
            Func::ToString => null_or(Type::String),
            Func::ToDecimal => {
                want(1, Num, "an int")?;
                self.round_digits(name, &args[1], types[1])?;
                null_or(Type::Decimal)
            }
            Func::FormatTime | Func::SqlTimestamp => {
                want(0, Num, "an int (epoch milliseconds)")?;
                self.not_decimal(name, &args[0], types[0])?;
                null_or(Type::String)
            }
            // The built-ins with a spec returned above.
            _ => Type::Any,
        })
    }

    /// One of Flink's further built-ins: each argument of the class its spec wants.
    fn builtin(
        &self,
        name: &str,
        args: &[Expr],
        types: &[Type],
        spec: &builtins::Spec,
    ) -> Result<Type, ExprError> {
        for (i, (arg, t)) in args.iter().zip(types).enumerate() {
            let (classes, expected): (&[Class], _) = match builtins::want_at(spec.args, i) {
                Want::Str => (&[Class::Str], "a string"),
                Want::Int | Want::Num => (&[Class::Num], "a number"),
                Want::Time => (&[Class::Num], "an int (epoch milliseconds)"),
                Want::Any => (
                    &[Class::Null, Class::Bool, Class::Num, Class::Str],
                    "a value",
                ),
            };
            self.expect(name, arg, *t, classes, expected)?;
            match builtins::want_at(spec.args, i) {
                Want::Time => self.not_decimal(name, arg, *t)?,
                Want::Int if *t == Type::Decimal => {
                    let message = format!("`{name}` needs an int, got decimal");
                    return Err(self.error(ExprErrorKind::Type, start(arg), message));
                }
                _ => {}
            }
        }
        let ty = match spec.ret {
            Ret::Str => Type::String,
            Ret::Int => Type::Int,
            Ret::AsFirst => numeric(types[0], types[0]),
            Ret::AsRest => types[1..].iter().fold(Type::Null, |acc, t| acc.join(*t)),
            Ret::Double => Type::Number,
            Ret::Bool => Type::Bool,
        };
        Ok(if spec.strict && types.contains(&Type::Null) {
            Type::Null
        } else {
            ty
        })
    }

    fn not_decimal(&self, name: &str, e: &Expr, t: Type) -> Result<(), ExprError> {
        if t != Type::Decimal {
            return Ok(());
        }
        let message = format!("`{name}` needs an int (epoch milliseconds), got decimal");
        Err(self.error(ExprErrorKind::Type, start(e), message))
    }

    fn round_digits(&self, name: &str, digits: &Expr, t: Type) -> Result<(), ExprError> {
        self.not_decimal(name, digits, t).map_err(|mut err| {
            err.message = format!("`{name}` needs an int number of digits, got decimal");
            err
        })?;
        match digits.kind {
            ExprKind::Int(d) if !(0..=28).contains(&d) => {
                let message = format!("`round` digits must be between 0 and 28, got {d}");
                Err(self.error(ExprErrorKind::Type, digits.pos, message))
            }
            _ => Ok(()),
        }
    }
}

/// The type of an arithmetic result on numbers of types `a` and `b` (either may be unknown).
fn numeric(a: Type, b: Type) -> Type {
    match (a, b) {
        (Type::Null, _) | (_, Type::Null) => Type::Null,
        (Type::Int, Type::Int) => Type::Int,
        (Type::Decimal, _) | (_, Type::Decimal) => Type::Decimal,
        _ => Type::Number,
    }
}
