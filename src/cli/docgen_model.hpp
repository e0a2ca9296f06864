// The CLI's own description as data (commands, options, arguments, what each completes to), read
// from CLI11, for the generated man page and shell completions (docgen.cpp, docgen_zsh.cpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace loopr::cli::docgen {

// What a value or argument completes to.
enum class Completion { none, ids, files, dirs, branches, commands, words };

struct OptDoc {
  std::vector<std::string> names;  ///< `-f`, `--follow`
  std::string value;               ///< `DIR`; empty for a flag
  std::string description;
  bool required = false;
  Completion completes = Completion::none;
};

struct ArgDoc {
  std::string key;  ///< `plan_id`
  std::string description;
  bool required = false;
  bool many = false;  ///< takes the rest of the words
  Completion completes = Completion::none;
  std::vector<std::string> words;  ///< Completion::words

  std::string display() const {
    std::string s = key;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
  }
};

struct CommandDoc {
  std::vector<std::string> path;  ///< {"daemon", "status"}; empty for loopr itself
  std::string description;
  std::vector<OptDoc> options;  ///< without --help
  std::vector<ArgDoc> args;
  std::vector<CommandDoc> subcommands;

  std::string name() const {
    std::string s = "loopr";
    for (const auto& p : path) s += " " + p;
    return s;
  }
};

/// `app` and its subcommands (hidden ones left out); `path` is where `app` sits.
CommandDoc describe(CLI::App& app, std::vector<std::string> path);
/// The first clause of a description, for completion menus.
std::string short_description(const std::string& text);
/// The root's options that every command takes too (`--version` is loopr's alone).
std::vector<OptDoc> global_options(const CommandDoc& root);
/// `c` and every command below it, depth first.
void collect(const CommandDoc& c, std::vector<const CommandDoc*>& all);
/// `loopr daemon status`.
std::string path_key(const CommandDoc& c);

}  // namespace loopr::cli::docgen
