use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = dbcompare::cli::Cli::parse();
    match dbcompare::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(dbcompare::error::exit_code(&e))
        }
    }
}
