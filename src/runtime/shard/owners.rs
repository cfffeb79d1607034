//! Which shard owns a key hash: its key group (the high hash bits scaled onto the key groups),
//! and the shard whose contiguous range of groups holds it. Looked up in a table per group, since
//! a division by the group count per routed event cost more than the rest of routing.

/// The owner of every key group among `n` shards.
#[derive(Debug, Clone)]
pub struct Owners {
    key_groups: u32,
    table: Box<[u16]>,
}

impl Owners {
    pub fn new(key_groups: u32, n: usize) -> Owners {
        let key_groups = key_groups.max(1);
        let table = (0..key_groups as usize)
            .map(|kg| ((kg * n) / key_groups as usize) as u16)
            .collect();
        Owners { key_groups, table }
    }

    /// The shard owning `hash`.
    #[inline(always)]
    pub fn of(&self, hash: u64) -> usize {
        let kg = ((hash >> 32) * u64::from(self.key_groups)) >> 32;
        // kg < key_groups = table.len(), since (hash >> 32) < 2^32.
        self.table.get(kg as usize).map_or(0, |&s| usize::from(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_agrees_with_the_ranges_it_replaces() {
        for (kgs, n) in [
            (720u32, 1usize),
            (720, 2),
            (720, 3),
            (720, 7),
            (8, 3),
            (1, 4),
        ] {
            let o = Owners::new(kgs, n);
            for i in 0..20_000u64 {
                let hash = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7);
                let kg = ((hash >> 32) * kgs as u64) >> 32;
                assert_eq!(o.of(hash), (kg as usize * n) / kgs as usize);
            }
            // The last group belongs to the last shard that owns any group.
            assert_eq!(o.of(u64::MAX), ((kgs as usize - 1) * n) / kgs as usize);
            assert_eq!(o.of(0), 0);
        }
    }
}
