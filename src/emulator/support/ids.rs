//! Fresh random ids (MessageIds, request ids, move-task handles) without a system call each:
//! a per-thread xoshiro256++ generator, seeded once per thread from the operating system's
//! (through uuid's v4, which asks `getrandom`). Two of these per SendMessage were two
//! `getrandom` calls, a few percent of the request's cost in a profile of `serve`.
//!
//! The ids only need to be unique and unguessable by accident, as AWS's are in practice: 122
//! random bits of a generator seeded with 256 bits of the OS's entropy on each thread.

use std::cell::Cell;

thread_local! {
    static STATE: Cell<[u64; 4]> = Cell::new(seed());
}

fn seed() -> [u64; 4] {
    let a = uuid::Uuid::new_v4().as_u128();
    let b = uuid::Uuid::new_v4().as_u128();
    let s = [a as u64, (a >> 64) as u64, b as u64, (b >> 64) as u64];
    // xoshiro's one forbidden state is all zeros.
    if s == [0; 4] { [1, 2, 3, 4] } else { s }
}

/// The next 64 random bits of this thread's generator (xoshiro256++).
fn next() -> u64 {
    STATE.with(|cell| {
        let mut s = cell.get();
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        cell.set(s);
        result
    })
}

/// A random version-4 UUID.
pub(crate) fn uuid_v4() -> uuid::Uuid {
    let bits = (u128::from(next()) << 64) | u128::from(next());
    uuid::Builder::from_random_bytes(bits.to_le_bytes()).into_uuid()
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
