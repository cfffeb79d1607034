//! The `sluice` binary: parse arguments, run, and turn errors into a message and exit code 1.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;

fn main() {
    let cli = sluice::cli::Cli::parse();
    if let Err(e) = sluice::cli::main_with(cli) {
        eprintln!("sluice: {e:#}");
        std::process::exit(1);
    }
}
