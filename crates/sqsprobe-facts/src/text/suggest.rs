//! Did-you-mean: the accepted word closest to a misspelt one, and the hint that names it (or
//! lists what is accepted). Shared by the suite parser, target profiles and the emulator's
//! chaos grammar, so it lives with the other text utilities, below them all.

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::normalized_damerau_levenshtein(word, c), c))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// "did you mean `x`?" when a candidate is close, otherwise the list of what is accepted.
pub fn suggest(word: &str, candidates: &[&str]) -> String {
    match closest(word, candidates.iter().copied()) {
        Some(c) => format!("did you mean `{c}`?"),
        None => format!("expected one of: {}", candidates.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(closest("recieve", ["receive", "send"]), Some("receive"));
        assert_eq!(closest("zzz", ["receive", "send"]), None);
        assert_eq!(suggest("zzz", &["a", "b"]), "expected one of: a, b");
    }
}
