use std::process::ExitCode;

use clap::Parser;
use dbcompare::measure::CountingAlloc;

/// Counts the client's allocations per operation (allocs/op and B/op in every report).
#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn main() -> ExitCode {
    if std::env::var_os("DBCOMPARE_ALLOC_COUNTING").is_none_or(|v| v != "off") {
        CountingAlloc::enable();
    }
    let cli = dbcompare::cli::Cli::parse();
    match dbcompare::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            dbcompare::output::write_err(format_args!("error: {e:#}\n"));
            ExitCode::from(dbcompare::error::exit_code(&e))
        }
    }
}
