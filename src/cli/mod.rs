//! The command line: argument parsing and the commands.
