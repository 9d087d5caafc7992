//! MD5 of several messages at once, one message to a lane of 32-bit words.
//!
//! One MD5 is a chain of 64 dependent steps a block, so a core runs it at the speed of that
//! chain, whatever its vector width. A SendMessageBatch digests up to ten bodies and as many
//! attribute sets, all independent: each step of the chain is then the same arithmetic on up
//! to sixteen words, which the
//! compiler turns into vector instructions (two AVX2 registers or one AVX-512 register a
//! step) when this module is compiled for them. It is written as plain loops over
//! `[u32; LANES]` and compiled three ways: for AVX-512 and for AVX2 (chosen when the CPU has
//! them, checked at run time), and for the target's baseline everywhere.
//!
//! Messages of different lengths share the passes while enough of them have blocks left; a
//! lane whose message has ended keeps its state through the passes that follow, and the last
//! few messages are finished one at a time by `md-5`'s block function, from where their lanes
//! stopped. The digests are `md-5`'s to the bit: the property test in `support/md5.rs` holds
//! every variant this CPU can run to it.

use md5::block_api::compress;

/// Messages a pass digests at once: sixteen 32-bit words fill one AVX-512 register, two AVX2
/// ones.
pub(super) const LANES: usize = 16;

/// Fewer unfinished messages than this are finished one at a time: a pass costs the same
/// however few of its lanes are live (docs/performance.md has the measurements).
pub(super) const MIN_LANES: usize = 3;

/// One 32-bit word of each lane.
type Words = [u32; LANES];

/// MD5's initial state, A to D.
const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// The step's rotation, by step.
const SHIFT: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, //
    5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, //
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, //
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

/// The step's constant, by step: the integer part of |sin(i + 1)| × 2³² (RFC 1321, 3.4).
const K: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

/// Blocks MD5 hashes for a message of `len` bytes: the bytes, a 0x80, zeros, and the length
/// in bits as 8 bytes, in whole 64-byte blocks.
pub(super) fn blocks(len: usize) -> usize {
    (len + 8) / 64 + 1
}

/// Block `k` of the `blocks` blocks MD5 hashes for `body` (see [`blocks`]).
fn block(body: &[u8], k: usize, blocks: usize) -> [u8; 64] {
    let start = k * 64;
    let mut block = [0u8; 64];
    if let Some(whole) = body.get(start..start + 64) {
        block.copy_from_slice(whole);
        return block;
    }
    let rest = body.get(start..).unwrap_or_default();
    block[..rest.len()].copy_from_slice(rest);
    if start <= body.len() {
        block[rest.len()] = 0x80;
    }
    if k + 1 == blocks {
        let bits = (body.len() as u64).wrapping_mul(8);
        block[56..].copy_from_slice(&bits.to_le_bytes());
    }
    block
}

/// The MD5 of each of `bodies` (at most [`LANES`]) into `out`, the same length, by the fastest
/// variant this CPU runs.
pub(super) fn digest_lanes(bodies: &[&[u8]], out: &mut [[u8; 16]]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, the one feature `avx512` is compiled for.
            return unsafe { x86::avx512(bodies, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, the one feature `avx2` is compiled for.
            return unsafe { x86::avx2(bodies, out) };
        }
    }
    lanes(bodies, out);
}

/// The variants compiled for x86-64's vector extensions: the same code as [`lanes`], which
/// the compiler vectorizes for the feature each enables.
#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    /// [`super::lanes`] for AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(in crate::support::md5) fn avx512(bodies: &[&[u8]], out: &mut [[u8; 16]]) {
        super::lanes(bodies, out);
    }

    /// [`super::lanes`] for AVX2.
    #[target_feature(enable = "avx2")]
    pub(in crate::support::md5) fn avx2(bodies: &[&[u8]], out: &mut [[u8; 16]]) {
        super::lanes(bodies, out);
    }
}

/// The MD5 of each of `bodies` (at most [`LANES`]) into `out`: passes over all lanes while at
/// least [`MIN_LANES`] messages have blocks left, then the rest one at a time. Always inlined,
/// so that each caller's target features apply to it.
#[inline(always)]
pub(super) fn lanes(bodies: &[&[u8]], out: &mut [[u8; 16]]) {
    debug_assert!(bodies.len() <= LANES && bodies.len() == out.len());
    let mut counts = [0usize; LANES];
    for (count, body) in counts.iter_mut().zip(bodies) {
        *count = blocks(body.len());
    }
    let mut state = INIT.map(|word| [word; LANES]);
    let mut k = 0;
    while counts.iter().filter(|&&n| n > k).count() >= MIN_LANES {
        let mut words = [[0u32; LANES]; 16];
        let mut live = [0u32; LANES];
        for (lane, body) in bodies.iter().enumerate() {
            if k < counts[lane] {
                live[lane] = u32::MAX;
                let block = block(body, k, counts[lane]);
                for (w, word) in block.chunks_exact(4).enumerate() {
                    words[w][lane] = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                }
            }
        }
        pass(&mut state, &words, &live);
        k += 1;
    }
    for (lane, (body, digest)) in bodies.iter().zip(out.iter_mut()).enumerate() {
        let mut words = state.map(|word| word[lane]);
        for rest in k..counts[lane] {
            compress(&mut words, &[block(body, rest, counts[lane])]);
        }
        for (bytes, word) in digest.chunks_exact_mut(4).zip(words) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
    }
}

/// One block of every lane: MD5's 64 steps on each, then the block's sum into the lanes that
/// are `live` (all bits set); the others keep their state.
#[inline(always)]
fn pass(state: &mut [Words; 4], words: &[Words; 16], live: &Words) {
    let [mut a, mut b, mut c, mut d] = *state;
    // The four registers' roles turn by one each step, so each step writes the one that
    // names its `a`, and no lane is copied to rotate them.
    macro_rules! rounds {
        ($($i:literal)*) => {$(
            step::<{ $i * 4 }>(&mut a, &b, &c, &d, words);
            step::<{ $i * 4 + 1 }>(&mut d, &a, &b, &c, words);
            step::<{ $i * 4 + 2 }>(&mut c, &d, &a, &b, words);
            step::<{ $i * 4 + 3 }>(&mut b, &c, &d, &a, words);
        )*};
    }
    rounds!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
    for (old, new) in state.iter_mut().zip([a, b, c, d]) {
        for lane in 0..LANES {
            let sum = old[lane].wrapping_add(new[lane]);
            old[lane] = (sum & live[lane]) | (old[lane] & !live[lane]);
        }
    }
}

/// Step `I` of MD5 (RFC 1321, 3.4) on every lane: `a` becomes `b + ((a + f(b, c, d) + K[I] +
/// word) <<< SHIFT[I])`, with the round's function and word order.
#[inline(always)]
fn step<const I: usize>(a: &mut Words, b: &Words, c: &Words, d: &Words, words: &[Words; 16]) {
    let word = &words[match I / 16 {
        0 => I,
        1 => (5 * I + 1) % 16,
        2 => (3 * I + 5) % 16,
        _ => (7 * I) % 16,
    }];
    for lane in 0..LANES {
        let (x, y, z) = (b[lane], c[lane], d[lane]);
        let f = match I / 16 {
            0 => (x & y) | (!x & z),
            1 => (x & z) | (y & !z),
            2 => x ^ y ^ z,
            _ => y ^ (x | !z),
        };
        a[lane] = a[lane]
            .wrapping_add(f)
            .wrapping_add(K[I])
            .wrapping_add(word[lane])
            .rotate_left(SHIFT[I])
            .wrapping_add(x);
    }
}
