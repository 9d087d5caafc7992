//! Evidence: the versioned JSON Lines format, receipt-handle digests and secret masking.
