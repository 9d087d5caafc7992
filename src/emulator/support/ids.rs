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
}
