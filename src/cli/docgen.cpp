#include "cli/docgen.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <regex>
#include <sstream>

#include "cli/context.hpp"
#include "cli/docgen_model.hpp"

namespace loopr::cli {
namespace docgen {
namespace {

Completion value_completion(const std::string& value) {
  if (value == "DIR") return Completion::dirs;
  if (value == "BRANCH") return Completion::branches;
  if (value == "CMD") return Completion::commands;
  if (value == "FILE") return Completion::files;
  return Completion::none;
}

// `plan | spec | phase` → its words.
std::vector<std::string> choice_words(const std::string& description) {
  static const std::regex choices(R"(^[a-z-]+( \| [a-z-]+)+$)");
  std::vector<std::string> out;
  if (!std::regex_match(description, choices)) return out;
  std::istringstream in(description);
  for (std::string w; in >> w;)
    if (w != "|") out.push_back(w);
  return out;
}

// ---- man page

std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

// An option in a synopsis as the reader types it: never hyphenated (`\%` before the word; a
// break inside `--max-iterations` would print `--max-itera- tions`), kept on one line with its
// value.
std::string option_synopsis(const OptDoc& o) {
  std::string s = "\\fB" + roff(o.names.front()) + "\\fR";
  if (!o.value.empty()) s += "\\ \\fI" + roff(o.value) + "\\fR";
  return "\\%" + (o.required ? s : "[" + s + "]");
}

std::string arg_synopsis(const ArgDoc& a) {
  std::string s = "\\fI" + roff(a.display()) + "\\fR" + (a.many ? "..." : "");
  return a.required ? s : "[" + s + "]";
}

void man_options(std::ostringstream& out, const std::vector<OptDoc>& options) {
  for (const auto& o : options) {
    out << ".TP\n";
    std::string names;
    for (const auto& n : o.names)
      names += (names.empty() ? "" : ", ") + ("\\%\\fB" + roff(n) + "\\fR");
    out << names;
    if (!o.value.empty()) out << " \\fI" << roff(o.value) << "\\fR";
    out << "\n" << roff(o.description) << "\n";
  }
}

void man_command(std::ostringstream& out, const CommandDoc& c) {
  out << ".SS \"" << roff(c.name()) << "\"\n";
  out << ".B " << roff(c.name()) << "\n";
  for (const auto& o : c.options) out << option_synopsis(o) << "\n";
  for (const auto& a : c.args) out << arg_synopsis(a) << "\n";
  out << ".PP\n" << roff(c.description) << "\n";
  for (const auto& a : c.args) {
    out << ".TP\n\\fI" << roff(a.display()) << "\\fR\n" << roff(a.description) << "\n";
  }
  man_options(out, c.options);
  for (const auto& sub : c.subcommands) man_command(out, sub);
}

// ---- bash

std::string bash_kind(Completion c, const std::vector<std::string>& words) {
  switch (c) {
    case Completion::ids:
      return "ids";
    case Completion::files:
      return "files";
    case Completion::dirs:
      return "dirs";
    case Completion::branches:
      return "branches";
    case Completion::commands:
      return "commands";
    case Completion::words: {
      std::string s = "words:";
      for (const auto& w : words) s += w + " ";
      s.pop_back();
      return s;
    }
    case Completion::none:
      break;
  }
  return "none";
}

}  // namespace

CommandDoc describe(CLI::App& app, std::vector<std::string> path) {
  CommandDoc doc;
  doc.path = path;
  doc.description = app.get_description();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt == app.get_help_ptr() || opt->get_group().empty()) continue;
    if (opt->nonpositional()) {
      OptDoc o;
      for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
      for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
      if (opt->get_type_size() != 0) {
        o.value = opt->get_option_text();
        if (o.value.empty()) o.value = opt->get_type_name();
      }
      o.description = opt->get_description();
      o.required = opt->get_required();
      o.completes = value_completion(o.value);
      doc.options.push_back(std::move(o));
    } else {
      ArgDoc a;
      a.key = opt->get_name();
      a.description = opt->get_description();
      a.required = opt->get_required();
      a.many = opt->get_items_expected_max() > 1;
      a.words = choice_words(a.description);
      if (!a.words.empty())
        a.completes = Completion::words;
      else if (a.key == "id" || a.key == "plan_id")
        a.completes = Completion::ids;
      else if (a.key == "file")
        a.completes = Completion::files;
      doc.args.push_back(std::move(a));
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    auto sub_path = path;
    sub_path.push_back(sub->get_name());
    doc.subcommands.push_back(describe(*sub, sub_path));
  }
  return doc;
}

// The first clause of a description, for completion menus.
std::string short_description(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  for (const char* cut : {"; ", " ("}) {
    auto p = s.find(cut);
    if (p != std::string::npos && p > 10) s = s.substr(0, p);
  }
  return s;
}

// The root's options that every command takes too (`--version` is loopr's alone).
std::vector<OptDoc> global_options(const CommandDoc& root) {
  std::vector<OptDoc> out;
  for (const auto& o : root.options)
    if (o.names.back() != "--version") out.push_back(o);
  return out;
}

void collect(const CommandDoc& c, std::vector<const CommandDoc*>& all) {
  all.push_back(&c);
  for (const auto& s : c.subcommands) collect(s, all);
}

std::string path_key(const CommandDoc& c) {
  std::string s = "loopr";
  for (const auto& p : c.path) s += " " + p;
  return s;
}

// The man page's sections that do not come from the CLI's help.
constexpr const char* kManTrailer = R"roff(.SH ENVIRONMENT
.TP
.B ANTHROPIC_API_KEY
The key of llm.provider anthropic (and of claude\-code, if set). The daemon inherits the
environment of the command that starts it.
.TP
.B OPENAI_API_KEY
The key of llm.provider openai, if the server checks one.
.TP
.BR ANTHROPIC_BASE_URL ", " OPENAI_BASE_URL
Override llm.base_url for that provider.
.TP
.BR LOOPR_PROVIDER ", " LOOPR_MODEL
Override llm.provider and llm.model.
.TP
.B LOOPR_LOG
The daemon's log level: trace, debug, info, warn or error.
.TP
.BR LOOPR_EXAMPLE_DIR ", " LOOPR_MOCK_LLM_BIN
Where \fBloopr demo\fR finds its example and the scripted model (default: installed beside
the binary, under share/loopr/example).
.TP
.B NO_COLOR
Set: no colour, even on a terminal.
.SH FILES
.TP
.I .loopr/config.yml
The repository's settings, written by \fBloopr init\fR with every key and its default.
.TP
.I .loopr/plans/ .loopr/specs/ .loopr/phases/
The artifacts of the loops (committed on their branches).
.TP
.I .loopr/state/ .loopr/run/ .loopr/worktrees/ .loopr/archive/ .loopr/logs/
The store, the daemon's socket and pid file, the loops' worktrees, archived worktrees, and
logs (daemon.out, daemon.log, each iteration's prompt, conversation and validation output).
Ignored by git.
.SH EXAMPLES
.nf
loopr doctor
loopr init
loopr submit "Add a \-\-dry\-run flag to the importer" \-\-wait
loopr review
loopr list
loopr show code\-001\-002\-001 \-\-iteration 2
loopr demo \-\-yes
.fi
.SH SEE ALSO
.BR git (1),
.BR bwrap (1),
.BR loopr\-mock\-llm (1)
)roff";

// "Exit codes: 0 ok, 1 failed, …" of the root's help as the EXIT STATUS section.
void man_exit_status(std::ostream& out, const std::string& exit_codes) {
  if (exit_codes.empty()) return;
  out << ".SH EXIT STATUS\n";
  std::string codes = exit_codes;
  std::replace(codes.begin(), codes.end(), '\n', ' ');
  std::istringstream items(codes);
  for (std::string item; std::getline(items, item, ',');) {
    auto b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    item = item.substr(b);
    while (!item.empty() && (item.back() == ' ' || item.back() == '.')) item.pop_back();
    auto space = item.find(' ');
    out << ".TP\n.B " << roff(item.substr(0, space)) << "\n"
        << roff(space == std::string::npos ? "" : item.substr(space + 1)) << "\n";
  }
}

}  // namespace docgen

using namespace docgen;

std::string man_page(CLI::App& app, std::string_view version) {
  CommandDoc root = describe(app, {});
  std::vector<OptDoc> globals = root.options;
  std::string description = root.description;
  std::string exit_codes;
  if (auto p = description.find("Exit codes:"); p != std::string::npos) {
    exit_codes = description.substr(p + 12);
    description = description.substr(0, p);
  }
  std::string first_line = description.substr(0, description.find('\n'));
  std::string rest = description.substr(first_line.size());
  std::string summary = first_line;
  if (summary.rfind("loopr: ", 0) == 0) summary = summary.substr(7);
  if (!summary.empty() && summary.back() == '.') summary.pop_back();

  std::ostringstream out;
  out << ".\\\" Generated by `loopr --generate-docs man` from the CLI's own help: do not edit.\n";
  out << ".TH LOOPR 1 \"\" \"" << roff(std::string(version)) << "\" \"User Commands\"\n";
  out << ".SH NAME\nloopr \\- " << roff(summary) << "\n";
  out << ".SH SYNOPSIS\n.B loopr\n";
  for (const auto& o : globals)
    if (o.names.back() != "--version") out << option_synopsis(o) << "\n";
  out << "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]\n";
  out << ".SH DESCRIPTION\n\\fBloopr\\fR " << roff(summary) << ".\n";
  std::string paragraph =
      rest.substr(rest.find_first_not_of('\n') == std::string::npos ? rest.size()
                                                                    : rest.find_first_not_of('\n'));
  if (!paragraph.empty()) out << roff(paragraph) << "\n";
  out << ".PP\nEvery command runs in the git repository containing the current folder (or "
         "\\fB\\-C\\fR \\fIDIR\\fR), takes \\fB\\-\\-json\\fR and \\fB\\-q\\fR, and reports an "
         "error as one line on standard error: \\fIloopr: what went wrong (what to do)\\fR.\n";
  out << ".SH GLOBAL OPTIONS\nBefore or after the command.\n";
  man_options(out, globals);
  out << ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint the help of loopr or of a command "
         "(\\fBloopr \\fR\\fICOMMAND\\fR \\fB\\-\\-help\\fR).\n";
  out << ".SH COMMANDS\n";
  for (const auto& c : root.subcommands) man_command(out, c);
  man_exit_status(out, exit_codes);
  out << kManTrailer;
  return out.str();
}

namespace {

// The shell functions that complete from the tables above (the same for every loopr).
constexpr const char* kBashCompletionDriver = R"sh(_loopr_ids() {
  command loopr "$@" --json list --all 2>/dev/null | grep -o '"id":"[^"]*"' | cut -d'"' -f4
}

_loopr_complete_kind() {
  case "$1" in
    ids) COMPREPLY=($(compgen -W "$(_loopr_ids "${cdir[@]}")" -- "$cur")) ;;
    branches)
      COMPREPLY=($(compgen -W "$(git "${cdir[@]}" for-each-ref --format='%(refname:short)' \
        refs/heads 2>/dev/null)" -- "$cur")) ;;
    commands) COMPREPLY=($(compgen -c -- "$cur")) ;;
    dirs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
    files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
    words:*) COMPREPLY=($(compgen -W "${1#words:}" -- "$cur")) ;;
  esac
}

_loopr() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path="loopr" word kind i npos=0
  local -a cdir=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${COMP_WORDS[i]}"
    if [[ $word == -C ]]; then
      cdir=(-C "${COMP_WORDS[i + 1]}")
      ((i++))
      continue
    fi
    if [[ $word == -* ]]; then
      if _loopr_value_kind "$path" "$word" >/dev/null; then ((i++)); fi
      continue
    fi
    if ((npos == 0)) && [[ " $(_loopr_subcommands "$path") " == *" $word "* ]]; then
      path="$path $word"
    else
      ((npos++))
    fi
  done
  ((COMP_CWORD > 1)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
  if [[ $prev == -* ]] && kind=$(_loopr_value_kind "$path" "$prev"); then
    _loopr_complete_kind "$kind"
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_loopr_options "$path")" -- "$cur"))
    return 0
  fi
  local subs
  subs=$(_loopr_subcommands "$path")
  if [[ -n $subs ]] && ((npos == 0)); then
    COMPREPLY=($(compgen -W "$subs" -- "$cur"))
    return 0
  fi
  kind=$(_loopr_argument_kind "$path" "$npos") && _loopr_complete_kind "$kind"
  return 0
}

complete -F _loopr loopr
)sh";

// `_loopr_value_kind PATH OPTION`: the kind of value an option takes (status 1: a flag).
void bash_value_kinds(std::ostream& out, const CommandDoc& root,
                      const std::vector<const CommandDoc*>& all) {
  out << "# The kind of value an option takes (status 1: it is a flag).\n";
  out << "_loopr_value_kind() {\n  case \"$1|$2\" in\n";
  for (const auto* c : all) {
    const auto& options = c == &root ? root.options : c->options;
    for (const auto& o : options) {
      if (o.value.empty()) continue;
      for (const auto& n : o.names)
        out << "    \"" << path_key(*c) << "|" << n << "\") echo " << bash_kind(o.completes, {})
            << " ;;\n";
    }
  }
  for (const auto& o : root.options) {
    if (o.value.empty()) continue;
    for (const auto& n : o.names)
      out << "    *\"|" << n << "\") echo " << bash_kind(o.completes, {}) << " ;;\n";
  }
  out << "    *) return 1 ;;\n  esac\n}\n\n";
}

}  // namespace

std::string bash_completion(CLI::App& app) {
  CommandDoc root = describe(app, {});
  std::vector<const CommandDoc*> all;
  collect(root, all);
  std::ostringstream out;
  out << "# bash completion for loopr. Generated by `loopr --generate-docs bash` from the CLI's\n"
         "# own help: do not edit. Loop ids come from `loopr --json list --all` (a running "
         "daemon).\n\n";
  out << "_loopr_subcommands() {\n  case \"$1\" in\n";
  for (const auto* c : all) {
    if (c->subcommands.empty()) continue;
    out << "    \"" << path_key(*c) << "\") echo";
    for (const auto& s : c->subcommands) out << " " << s.path.back();
    out << " ;;\n";
  }
  out << "  esac\n}\n\n";
  std::string global_words;
  for (const auto& o : global_options(root))
    for (const auto& n : o.names) global_words += " " + n;
  out << "_loopr_options() {\n  case \"$1\" in\n";
  for (const auto* c : all) {
    out << "    \"" << path_key(*c) << "\") echo";
    for (const auto& o : c->options)
      if (c != &root || o.names.back() == "--version")
        for (const auto& n : o.names) out << " " << n;
    out << global_words << " --help ;;\n";
  }
  out << "  esac\n}\n\n";
  bash_value_kinds(out, root, all);
  out << "# The kind of the command's Nth argument ($2, from 0).\n";
  out << "_loopr_argument_kind() {\n  case \"$1\" in\n";
  for (const auto* c : all) {
    if (c->args.empty()) continue;
    out << "    \"" << path_key(*c) << "\")\n      case \"$2\" in\n";
    for (std::size_t i = 0; i < c->args.size(); ++i) {
      const auto& a = c->args[i];
      out << "        " << (a.many ? "*" : std::to_string(i)) << ") echo \""
          << bash_kind(a.completes, a.words) << "\" ;;\n";
    }
    out << "      esac ;;\n";
  }
  out << "  esac\n}\n\n";
  out << kBashCompletionDriver;
  return out.str();
}

int print_generated_doc(CLI::App& app, std::string_view kind, std::string_view version) {
  if (kind == "man")
    std::cout << man_page(app, version);
  else if (kind == "bash")
    std::cout << bash_completion(app);
  else if (kind == "zsh")
    std::cout << zsh_completion(app);
  else
    return report(CommandError{kUsage, "--generate-docs takes man, bash or zsh", ""});
  return kOk;
}

}  // namespace loopr::cli
