// The man page loopr(1) and the bash and zsh completions, generated from the CLI11 definition
// that `--help` prints, so none of them can disagree with it. The build runs
// `loopr --generate-docs man|bash|zsh` (cmake/docs.cmake) and installs the results.
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace loopr::cli {

/// roff for `man 1 loopr`: every command with its options and arguments, and the global
/// options, from `app`; plus the environment, files and examples (facts `--help` leaves out).
std::string man_page(CLI::App& app, std::string_view version);

/// A bash completion script (`complete -F _loopr loopr`): commands, their flags, option values
/// (folders for -C, branches for --base, commands for --validation), plan/spec/phase for
/// `validate`, files, and loop ids from `loopr --json list --all` (only when a daemon answers).
std::string bash_completion(CLI::App& app);

/// The same for zsh (`#compdef loopr`, an `_arguments` function per command).
std::string zsh_completion(CLI::App& app);

/// Prints the document `kind` (man | bash | zsh) for `--generate-docs`; exit code.
int print_generated_doc(CLI::App& app, std::string_view kind, std::string_view version);

}  // namespace loopr::cli
