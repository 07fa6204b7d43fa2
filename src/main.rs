//! The `perftop` binary: parse the command line and hand over to the library.

fn main() -> std::process::ExitCode {
    perftop::root::raise_open_files_limit();
    perftop::cli::main()
}
