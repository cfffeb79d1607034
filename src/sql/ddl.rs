//! `CREATE [TEMPORARY] TABLE`: Flink's table DDL read from its tokens (the SQL parser has no
//! computed columns, `WATERMARK FOR` or `ROW<...>`), into a [`Table`]: its columns, its time
//! attribute and watermark, its primary key and its `WITH` options.

use std::collections::BTreeMap;

use sqlparser::ast::Expr;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan};

use super::error::SqlError;
use super::lex::{is_word, FlinkDialect};
use super::types::SqlType;

/// One column of a table: physical (read from the record) or computed (`name AS expr`).
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub ty: SqlType,
    pub computed: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Watermark {
    /// The time attribute column.
    pub column: String,
    pub expr: Expr,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    pub watermark: Option<Watermark>,
    pub primary_key: Vec<String>,
    /// `WITH ('k' = 'v')`, keys as written.
    pub options: BTreeMap<String, (String, Span)>,
    pub span: Span,
}

impl Table {
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(|(v, _)| v.as_str())
    }
}

struct Cursor<'a> {
    t: &'a [TokenWithSpan],
    i: usize,
    end: Location,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<&'a TokenWithSpan> {
        self.t.get(self.i)
    }
    fn here(&self) -> Location {
        self.peek().map_or(self.end, |t| t.span.start)
    }
    fn eat_word(&mut self, w: &str) -> bool {
        let yes = is_word(self.peek(), w);
        self.i += usize::from(yes);
        yes
    }
    fn expect_word(&mut self, w: &str) -> Result<(), SqlError> {
        if self.eat_word(w) {
            return Ok(());
        }
        Err(SqlError::at(
            self.here(),
            format!("expected {w}, found {}", self.found()),
        ))
    }
    fn expect(&mut self, tok: Token, what: &str) -> Result<(), SqlError> {
        if self.peek().map(|t| &t.token) == Some(&tok) {
            self.i += 1;
            return Ok(());
        }
        Err(SqlError::at(
            self.here(),
            format!("expected {what}, found {}", self.found()),
        ))
    }
    fn found(&self) -> String {
        self.peek().map_or("the end of the statement".into(), |t| {
            format!("`{}`", t.token)
        })
    }
    fn ident(&mut self, what: &str) -> Result<(String, Span), SqlError> {
        match self.peek() {
            Some(TokenWithSpan {
                token: Token::Word(w),
                span,
            }) => {
                self.i += 1;
                Ok((w.value.clone(), *span))
            }
            _ => Err(SqlError::at(
                self.here(),
                format!("expected {what}, found {}", self.found()),
            )),
        }
    }
    fn string(&mut self, what: &str) -> Result<(String, Span), SqlError> {
        match self.peek() {
            Some(TokenWithSpan {
                token: Token::SingleQuotedString(s),
                span,
            }) => {
                self.i += 1;
                Ok((s.clone(), *span))
            }
            _ => Err(SqlError::at(
                self.here(),
                format!("expected {what} (a quoted string), found {}", self.found()),
            )),
        }
    }
    /// The tokens up to the next `,` or `)` at this depth (not consumed).
    fn item(&mut self) -> &'a [TokenWithSpan] {
        let start = self.i;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t.token {
                Token::LParen | Token::Lt => depth += 1,
                Token::RParen | Token::Gt if depth > 0 => depth -= 1,
                Token::Comma | Token::RParen if depth == 0 => break,
                _ => {}
            }
            self.i += 1;
        }
        &self.t[start..self.i]
    }
}

/// `tokens`: the whole statement, from `CREATE`.
pub fn create_table(tokens: &[TokenWithSpan]) -> Result<Table, SqlError> {
    let end = tokens.last().map_or(Location::new(1, 1), |t| t.span.end);
    let mut c = Cursor {
        t: tokens,
        i: 0,
        end,
    };
    let span = tokens.first().map_or(Span::empty(), |t| t.span);
    c.expect_word("CREATE")?;
    c.eat_word("TEMPORARY");
    c.expect_word("TABLE")?;
    if c.eat_word("IF") {
        c.expect_word("NOT")?;
        c.expect_word("EXISTS")?;
    }
    let mut name = c.ident("a table name")?.0;
    while c.peek().map(|t| &t.token) == Some(&Token::Period) {
        c.i += 1;
        name = c.ident("a table name")?.0; // catalog.database.table: the table's own name
    }
    let mut table = Table {
        name,
        columns: Vec::new(),
        watermark: None,
        primary_key: Vec::new(),
        options: BTreeMap::new(),
        span,
    };
    c.expect(Token::LParen, "`(` and the columns")?;
    loop {
        let item = c.item();
        table_item(&mut table, item, c.here())?;
        if c.peek().map(|t| &t.token) == Some(&Token::Comma) {
            c.i += 1;
            continue;
        }
        c.expect(Token::RParen, "`,` or `)`")?;
        break;
    }
    if c.eat_word("COMMENT") {
        c.string("the comment")?;
    }
    if is_word(c.peek(), "PARTITIONED") {
        return Err(SqlError::at(c.here(), "PARTITIONED BY is not supported"));
    }
    if c.eat_word("WITH") {
        options(&mut c, &mut table)?;
    }
    if let Some(t) = c.peek() {
        return Err(SqlError::span(
            t.span,
            format!("unexpected `{}` after the table definition", t.token),
        ));
    }
    Ok(table)
}

fn options(c: &mut Cursor<'_>, table: &mut Table) -> Result<(), SqlError> {
    c.expect(Token::LParen, "`(` and the options")?;
    loop {
        let (key, span) = c.string("an option name")?;
        c.expect(Token::Eq, "`=`")?;
        let (value, _) = c.string("the option's value")?;
        if table.options.insert(key.clone(), (value, span)).is_some() {
            return Err(SqlError::span(
                span,
                format!("option '{key}' is given twice"),
            ));
        }
        if c.peek().map(|t| &t.token) == Some(&Token::Comma) {
            c.i += 1;
            continue;
        }
        return c.expect(Token::RParen, "`,` or `)`");
    }
}

fn table_item(table: &mut Table, item: &[TokenWithSpan], at: Location) -> Result<(), SqlError> {
    let Some(first) = item.first() else {
        return Err(SqlError::at(
            at,
            "expected a column, WATERMARK or PRIMARY KEY",
        ));
    };
    let mut c = Cursor {
        t: item,
        i: 0,
        end: at,
    };
    if c.eat_word("WATERMARK") {
        c.expect_word("FOR")?;
        let (column, span) = c.ident("the time attribute column")?;
        c.expect_word("AS")?;
        let expr = expression(&item[c.i..], at)?;
        if table.watermark.is_some() {
            return Err(SqlError::span(
                first.span,
                "a table has at most one WATERMARK",
            ));
        }
        table.watermark = Some(Watermark { column, expr, span });
        return Ok(());
    }
    if c.eat_word("CONSTRAINT") {
        c.ident("the constraint's name")?;
    }
    if c.eat_word("PRIMARY") {
        c.expect_word("KEY")?;
        c.expect(Token::LParen, "`(` and the key columns")?;
        loop {
            table.primary_key.push(c.ident("a key column")?.0);
            if c.peek().map(|t| &t.token) == Some(&Token::Comma) {
                c.i += 1;
                continue;
            }
            break;
        }
        c.expect(Token::RParen, "`)`")?;
        c.expect_word("NOT")?;
        c.expect_word("ENFORCED")?;
        return Ok(());
    }
    let (name, span) = c.ident("a column name")?;
    if table.columns.iter().any(|col| col.name == name) {
        return Err(SqlError::span(
            span,
            format!("column `{name}` is declared twice"),
        ));
    }
    if c.eat_word("AS") {
        let expr = expression(&item[c.i..], at)?;
        table.columns.push(Column {
            name,
            ty: SqlType::Computed,
            computed: Some(expr),
            span,
        });
        return Ok(());
    }
    let rest = &item[c.i..];
    let type_end = rest
        .iter()
        .position(|t| {
            is_word(Some(t), "NOT")
                || is_word(Some(t), "NULL")
                || is_word(Some(t), "COMMENT")
                || is_word(Some(t), "METADATA")
        })
        .unwrap_or(rest.len());
    if let Some(t) = rest.get(type_end).filter(|t| is_word(Some(t), "METADATA")) {
        return Err(SqlError::span(
            t.span,
            "METADATA columns are not supported yet",
        ));
    }
    let ty = SqlType::parse(&rest[..type_end], span)?;
    table.columns.push(Column {
        name,
        ty,
        computed: None,
        span,
    });
    Ok(())
}

fn expression(tokens: &[TokenWithSpan], at: Location) -> Result<Expr, SqlError> {
    let Some(first) = tokens.first() else {
        return Err(SqlError::at(at, "expected an expression"));
    };
    let start = first.span.start;
    let mut p = Parser::new(&FlinkDialect).with_tokens_with_locations(tokens.to_vec());
    let expr = p.parse_expr().map_err(|e| SqlError::parser(e, start))?;
    let next = &p.peek_token_ref().token;
    if *next != Token::EOF {
        return Err(SqlError::at(
            start,
            format!("unexpected `{next}` after the expression"),
        ));
    }
    Ok(expr)
}
