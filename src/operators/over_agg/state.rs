//! The over aggregate's checkpoint state: per partition (by key hash and bytes, so a restore onto
//! another shard count finds it) its accumulators and the rows of its frame, the retractable
//! MIN/MAX values, and every row still waiting for the watermark with its source position.

use super::OverAggregate;
use crate::checkpoint::codec::{Dec, Enc};
use crate::operators::rows::{get, put};
use crate::record::event::{from_wide, wide_bytes, Value};

fn put_vals(e: &mut Enc, vals: &[Value]) {
    for &v in vals {
        let (k, b) = wide_bytes(v);
        e.u8(k);
        e.bytes(&b);
    }
}

fn get_vals(d: &mut Dec<'_>, n: usize) -> Result<Vec<Value>, String> {
    (0..n)
        .map(|_| {
            let k = d.u8("value kind")?;
            let b = d.bytes("value")?;
            if b.len() != 16 {
                return Err("a value of the wrong width".into());
            }
            Ok(from_wide(k, b))
        })
        .collect()
}

impl OverAggregate {
    pub(super) fn encode(&self, e: &mut Enc) {
        self.counters.encode(e);
        let parts = &self.parts;
        e.u64(parts.keys.len() as u64);
        for k in 0..parts.keys.slots() {
            let Some((hash, key)) = parts.keys.get(k) else {
                continue;
            };
            e.u64(hash);
            e.bytes(key);
            e.i64(parts.last[k as usize]);
            self.layout.encode(parts.accs(k), &self.sketches, e);
            let frame = &parts.frames[k as usize];
            e.u64(frame.len() as u64);
            for &(t, vals) in frame {
                e.i64(t);
                put_vals(e, self.arena.get(vals));
            }
        }
        self.extrema.encode(e);
        let waiting = self.waiting.sorted();
        e.u64(waiting.len() as u64);
        for t in waiting {
            let (hash, key) = parts.keys.get(t.key).unwrap_or((0, &[]));
            let Some(p) = self.pending.get(t.tag) else {
                continue;
            };
            e.u64(hash);
            e.bytes(key);
            e.i64(p.ts);
            let (part, pos, sub) = p.order;
            e.u32(u32::from(part));
            e.u64(pos);
            e.u64(sub);
            put_vals(e, self.arena.get(p.vals));
            put(e, t.at, self.store.get(p.row));
        }
    }

    pub(super) fn decode(
        &mut self,
        state: &[u8],
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<(), String> {
        let mut d = Dec::new(state);
        self.counters.add_decoded(&mut d)?;
        let (w, stride) = (self.layout.words(), self.arena.stride);
        let n = d.count(24, "partitions")?;
        for _ in 0..n {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let last = d.i64("last row time")?;
            let mut accs = vec![0u64; w];
            let mut sketches = crate::operators::window::aggregate::Sketches::default();
            let into = if keep(hash) {
                &mut self.sketches
            } else {
                &mut sketches
            };
            self.layout.decode(&mut d, &mut accs, into)?;
            let rows = d.count(8, "frame rows")?;
            let mut frame = Vec::with_capacity(rows);
            for _ in 0..rows {
                let t = d.i64("frame row time")?;
                frame.push((t, get_vals(&mut d, stride)?));
            }
            if !keep(hash) {
                continue;
            }
            if self.parts.keys.find(hash, key).is_some() {
                return Err("an over aggregate's partition appears twice".into());
            }
            let k = self.parts.intern(hash, key) as usize;
            self.parts.accs[k * w..(k + 1) * w].copy_from_slice(&accs);
            self.parts.last[k] = last;
            for (t, vals) in frame {
                let v = self.arena.put(vals.into_iter());
                self.parts.frames[k].push_back((t, v));
            }
        }
        let parts = &mut self.parts;
        self.extrema.decode(&mut d, keep, &mut |hash, key| {
            parts.intern(hash, key) as usize
        })?;
        let waiting = d.count(33, "waiting rows")?;
        for _ in 0..waiting {
            let hash = d.u64("key hash")?;
            let key = d.bytes("key")?;
            let ts = d.i64("row time")?;
            let part = u16::try_from(d.u32("partition")?).map_err(|_| "partition index")?;
            let order = (part, d.u64("position")?, d.u64("position")?);
            let vals = get_vals(&mut d, stride)?;
            let (at, row) = get(&mut d)?;
            if keep(hash) {
                let k = self.parts.intern(hash, key);
                let v = self.arena.put(vals.into_iter());
                self.hold(k, ts, at, row, v, order);
            }
        }
        if !d.is_empty() {
            return Err("bytes after the over aggregate's state".into());
        }
        Ok(())
    }
}
