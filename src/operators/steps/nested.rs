//! The fields a step reads one level inside its record's objects (`left.price`, `right.dateTime`,
//! `table.rate`: a join's sides, a temporal join's table): per object, every such key found in
//! one pass over the object's token, with the same extractor that finds the top-level fields,
//! instead of one scan of the object per path (a scan that must also read past every field to
//! the object's end, since a key may repeat). Where that pass cannot answer (the field is not an
//! object, the object repeats a wanted key or is malformed) the step reads each path as before,
//! so what a path reads never changes, only how fast.

use crate::expr::{FieldPath, Segment};
use crate::record::bind::MAX_FIELDS;
use crate::record::json::{self, FieldSet, KeyShape, Token, TokenKind};

/// One object whose keys a step reads.
struct Object {
    /// Its field's index among the step's top-level fields.
    top: usize,
    fields: FieldSet,
    shape: KeyShape,
    /// Its keys' place in the flat token array.
    at: usize,
    len: usize,
}

/// The objects of one step, and where each nested path's token is found.
pub(super) struct Objects {
    objects: Vec<Object>,
    /// Per nested path (in the step's order): (object, index in the flat token array), for a
    /// path one key deep into a top-level field.
    pub(super) slots: Vec<Option<(usize, usize)>>,
    /// Keys over all objects: the flat token array's length.
    pub(super) total: usize,
}

impl Objects {
    /// From a step's nested paths: (path, its top-level field's index, the rest of the path).
    pub(super) fn new(nested: &[(FieldPath, usize, FieldPath)]) -> Objects {
        let mut keys: Vec<(usize, Vec<String>)> = Vec::new();
        let mut slots = Vec::with_capacity(nested.len());
        for (_, top, rest) in nested {
            let [Segment::Key(k)] = rest.segments() else {
                slots.push(None);
                continue;
            };
            let o = match keys.iter().position(|(t, _)| t == top) {
                Some(o) => o,
                None => {
                    keys.push((*top, Vec::new()));
                    keys.len() - 1
                }
            };
            let names = &mut keys[o].1;
            let i = names.iter().position(|n| n == k).unwrap_or_else(|| {
                names.push(k.clone());
                names.len() - 1
            });
            slots.push(Some((o, i)));
        }
        let total: usize = keys.iter().map(|(_, n)| n.len()).sum();
        if total > MAX_FIELDS || keys.len() > 64 {
            // Too many to hold on the stack per record: every path is read as before.
            return Objects {
                objects: Vec::new(),
                slots: vec![None; nested.len()],
                total: 0,
            };
        }
        let mut at = 0;
        let objects: Vec<Object> = keys
            .iter()
            .map(|(top, names)| {
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                let object = Object {
                    top: *top,
                    fields: FieldSet::new(&refs),
                    shape: KeyShape::new(),
                    at,
                    len: names.len(),
                };
                at += names.len();
                object
            })
            .collect();
        let slots = slots
            .into_iter()
            .map(|s| s.map(|(o, i)| (o, objects[o].at + i)))
            .collect();
        Objects {
            objects,
            slots,
            total,
        }
    }

    /// Finds every object's keys, from the top-level tokens `toks`, into `out` (`total` long);
    /// returns which objects were read (bit `o`: object `o`'s tokens in `out` are its keys').
    pub(super) fn extract<'a>(
        &mut self,
        toks: &[Option<Token<'a>>],
        out: &mut [Option<Token<'a>>],
    ) -> u64 {
        let mut read = 0u64;
        for (o, obj) in self.objects.iter_mut().enumerate() {
            let Some(t) = toks.get(obj.top).copied().flatten() else {
                continue;
            };
            let Some(slice) = out.get_mut(obj.at..obj.at + obj.len) else {
                continue;
            };
            if t.kind == TokenKind::Object
                && json::extract_shaped(t.raw, &obj.fields, &mut obj.shape, slice).is_ok()
            {
                read |= 1 << o;
            }
        }
        read
    }
}
