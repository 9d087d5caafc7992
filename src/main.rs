//! The `sqsprobe` binary: everything lives in the library; this only hands over the exit code,
//! and chooses the allocator.

/// mimalloc instead of glibc's malloc: the emulator allocates on one worker thread and frees
/// on another (request bodies, stored messages), which glibc serves from its slow paths
/// (`_int_malloc` was 9% of `serve` under SendMessage in a profile; docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(sqsprobe::cli::main());
}
