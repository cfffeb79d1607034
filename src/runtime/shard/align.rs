//! Watermark alignment of a job that reads logs, on the producing side: what each slot of the
//! padded chunk order becomes (a log partition reads or sits out its round; an aligned range
//! partition reads its next chunk or leaves the slot empty), decided from what the chunks of
//! earlier rounds reported (`runtime::log_align`).

use super::Shard;
use crate::runtime::log_align::{Decision, Holds};

/// What watermark alignment makes of a chunk slot of the order.
pub(super) enum Slot {
    /// The reports it depends on are not in yet.
    Wait,
    /// An aligned range partition sits the round out (or is done): an empty slot.
    Pad,
    Chunk(SlotChunk),
}

pub(super) struct SlotChunk {
    /// The partition's chunk index to read (an aligned file's next chunk, not the round).
    pub k: u64,
    pub last: bool,
    /// A log partition reads nothing this round.
    pub sit_out: bool,
    /// The round to report the chunk's end for (aligned range partitions).
    pub round: Option<u64>,
}

impl Shard {
    /// Slot `(part, k)` of the order under watermark alignment (`last`: the order's last chunk
    /// of the partition): a log partition reads or sits out its chunk of round `k`; an aligned
    /// range partition reads its next chunk or leaves the slot empty.
    pub(super) fn aligned_slot(&mut self, part: u16, k: u64, last: bool) -> Slot {
        let plain = |sit_out| {
            Slot::Chunk(SlotChunk {
                k,
                last,
                sit_out,
                round: None,
            })
        };
        let Some(a) = self.setup.log_align.clone() else {
            return plain(false);
        };
        let log = self.setup.parts[part as usize].is_log();
        let count = match a.count(part) {
            Some(count) if !log => count,
            _ => {
                return match a.decide(part, k, last) {
                    Decision::Read => plain(false),
                    Decision::SitOut => plain(true),
                    Decision::Wait => Slot::Wait,
                }
            }
        };
        let next = self.aligned_read[part as usize];
        let done = count.is_some_and(|c| next >= c);
        let last = count.is_some_and(|c| next + 1 == c);
        let d = if done {
            Decision::SitOut
        } else {
            a.decide(part, k, last)
        };
        match d {
            Decision::Wait => Slot::Wait,
            Decision::SitOut => {
                let holds = if done { Holds::Done } else { Holds::Holding };
                a.report(part, k, i64::MIN, holds);
                Slot::Pad
            }
            Decision::Read => {
                self.aligned_read[part as usize] += 1;
                Slot::Chunk(SlotChunk {
                    k: next,
                    last,
                    sit_out: false,
                    round: Some(k),
                })
            }
        }
    }
}
