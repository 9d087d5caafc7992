//! What a case is about, for the conformance matrix's scores (pure).
//!
//! An **area** is one of a fixed list ([`AREAS`]), so that every target's per-area scores line
//! up whichever suite files a run was made from: a suite names its area (`area:` at the top),
//! a case may name another. The list is in order of weight — what a consumer loses first when
//! a target gets it wrong — and the matrix's "what will surprise you" list reads it that way.
//!
//! An **aspect** says whether a case checks *semantics* (what a consumer can observe: leases,
//! redelivery, ordering, deduplication, redrive, defaults) or *validation* (the error code and
//! message a bad input gets). A case may say (`aspect:`); otherwise the parser derives it from
//! its steps (`parse/aspect.rs`): validation when it expects an error and checks nothing of
//! the messages themselves. A target that gets leases right but error strings wrong then reads
//! as it is.

/// One area of SQS behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AreaSpec {
    /// The key written in suites (`area: leases`) and evidence.
    pub key: &'static str,
    /// The heading the matrix shows.
    pub title: &'static str,
}

/// Every area, heaviest first (see the module docs).
pub const AREAS: &[AreaSpec] = &[
    AreaSpec {
        key: "leases",
        title: "Leases and visibility",
    },
    AreaSpec {
        key: "handles",
        title: "Receipt handles and acknowledgements",
    },
    AreaSpec {
        key: "fifo",
        title: "FIFO ordering and deduplication",
    },
    AreaSpec {
        key: "dead-letter",
        title: "Dead-letter queues and redrive",
    },
    AreaSpec {
        key: "move-tasks",
        title: "Message move tasks",
    },
    AreaSpec {
        key: "batches",
        title: "Batches",
    },
    AreaSpec {
        key: "polling-delays",
        title: "Delays and polling",
    },
    AreaSpec {
        key: "messages",
        title: "Message bodies and attributes",
    },
    AreaSpec {
        key: "attributes",
        title: "Queue attributes, tags and permissions",
    },
    AreaSpec {
        key: "queues",
        title: "Queue lifecycle",
    },
    AreaSpec {
        key: "errors",
        title: "Errors and validation",
    },
    AreaSpec {
        key: "query-protocol",
        title: "Query protocol",
    },
];

/// The area with this key.
pub fn area(key: &str) -> Option<&'static AreaSpec> {
    AREAS.iter().find(|a| a.key == key)
}

/// Every area key, for did-you-mean.
pub fn area_keys() -> Vec<&'static str> {
    AREAS.iter().map(|a| a.key).collect()
}

/// What a case checks (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Aspect {
    /// What a consumer can observe of its messages and queues.
    Semantics,
    /// The error code and message a bad input gets.
    Validation,
}

impl Aspect {
    /// The word in suites and evidence.
    pub fn key(self) -> &'static str {
        match self {
            Aspect::Semantics => "semantics",
            Aspect::Validation => "validation",
        }
    }

    /// The aspect a suite word names.
    pub fn parse(word: &str) -> Option<Aspect> {
        match word {
            "semantics" => Some(Aspect::Semantics),
            "validation" => Some(Aspect::Validation),
            _ => None,
        }
    }

    /// Every word, for did-you-mean.
    pub const KEYS: &'static [&'static str] = &["semantics", "validation"];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn area_keys_are_unique_and_found() {
        let keys = area_keys();
        for (i, k) in keys.iter().enumerate() {
            assert!(!keys[..i].contains(k), "{k} twice");
            assert_eq!(area(k).unwrap().key, *k);
        }
        assert!(area("lease").is_none());
    }
}
