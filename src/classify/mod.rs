//! Classification of bounded observations into outcome classes, verdicts and decisions (pure).
