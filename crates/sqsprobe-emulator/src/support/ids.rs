//! Fresh random ids (MessageIds, request ids, move-task ids) without a system call each:
//! `rand`'s per-thread generator (ChaCha, seeded and reseeded from the operating system),
//! where `uuid`'s own v4 asks `getrandom` for every id. Two of these per SendMessage were two
//! `getrandom` calls, a few percent of the request's cost in a profile of `serve`
//! (docs/performance.md).

use rand::RngExt;

/// A random version-4 UUID.
pub(crate) fn uuid_v4() -> uuid::Uuid {
    uuid::Builder::from_random_bytes(rand::rng().random()).into_uuid()
}

/// `id` as AWS writes ids (hyphenated, lower case), without the formatting machinery of
/// `to_string`: a request id and a MessageId are written on every send.
pub(crate) fn hyphenated(id: uuid::Uuid) -> String {
    super::hex::text(&super::hex::uuid(id.as_bytes()))
}

/// One emulator's MessageIds: each a keyed mix of the seq its message was sent with (unique in
/// the emulator), shaped as a version-4 UUID. A message stores the 8-byte seq instead of the
/// 16-byte id (docs/emulator.md, "Memory"), and the id is rendered from it on the way out (ten
/// times per receive); the keys are random per emulator, so ids look random and differ between
/// emulators and runs.
///
/// Each half of the id is a bijection of the seq (a key mixed in, then SplitMix64's
/// finaliser, which is invertible), so two messages of one emulator can share an id only if
/// both halves agree in all but the 6 bits the UUID's version and variant overwrite. It
/// replaced two SipHash-1-3 hashes per id at a small fraction of their cost.
#[derive(Debug)]
pub(crate) struct MessageIds {
    keys: [u64; 3],
}

impl Default for MessageIds {
    fn default() -> Self {
        Self {
            keys: rand::rng().random(),
        }
    }
}

/// SplitMix64's finaliser: a bijection of `u64` whose every output bit depends on every input
/// bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl MessageIds {
    /// The MessageId of the message sent with seq `origin`.
    pub fn of(&self, origin: u64) -> uuid::Uuid {
        let [a, b, c] = self.keys;
        let high = mix(origin ^ a);
        let low = mix(high.wrapping_add(b) ^ c);
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&high.to_le_bytes());
        bytes[8..].copy_from_slice(&low.to_le_bytes());
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_version_4_and_do_not_repeat() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let id = uuid_v4();
            assert_eq!(id.get_version_num(), 4);
            assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
            assert!(seen.insert(id));
        }
        // Another thread draws from its own generator, seeded apart.
        let other = std::thread::spawn(uuid_v4).join().unwrap();
        assert!(!seen.contains(&other));
    }

    #[test]
    fn message_ids_are_version_4_fixed_per_seq_and_differ_between_emulators() {
        let ids = MessageIds::default();
        let mut seen = std::collections::HashSet::new();
        for origin in 0..10_000 {
            let id = ids.of(origin);
            assert_eq!(id.get_version_num(), 4);
            assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
            assert_eq!(ids.of(origin), id, "rendered again, the same id");
            assert_eq!(hyphenated(id), id.to_string());
            assert!(seen.insert(id));
        }
        assert_ne!(MessageIds::default().of(1), ids.of(1));
    }
}
