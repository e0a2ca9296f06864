// `loopr validate plan|spec|phase FILE`: the artifact format check, as the engine runs it, for
// people and scripts. Works outside a repository too (default limits); inside one it uses the
// `artifacts:` limits of `.loopr/config.yml`.
#include <CLI/CLI.hpp>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include <loopr/markdown/artifacts.hpp>

#include "cli/command.hpp"
#include "cli/commands.hpp"

namespace loopr::cli {
namespace {

using markdown::ArtifactKind;

// The limits of the repository the command runs in, or the defaults outside of one.
ArtifactsConfig artifact_limits(const GlobalOptions& opts) {
  auto root = find_repo_root(start_folder(opts));
  if (!root) return {};
  return require_config(RepoPaths(*root)).artifacts;
}

std::string read_artifact(const std::filesystem::path& path, const std::string& shown) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw CommandError{kUsage, "no such file: " + shown, "check the path of the artifact"};
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) throw CommandError{kUsage, "cannot read " + shown, "check the file's permissions"};
  return s.str();
}

nlohmann::json items_json(ArtifactKind kind, std::string_view text, const ArtifactsConfig& limits) {
  nlohmann::json items = nlohmann::json::array();
  if (kind == ArtifactKind::plan) {
    for (const auto& s : markdown::check_plan(text, limits).doc.specs)
      items.push_back(
          {{"index", s.index}, {"name", s.name}, {"description", s.description}, {"line", s.line}});
  } else if (kind == ArtifactKind::spec) {
    for (const auto& p : markdown::check_spec(text, limits).doc.phases)
      items.push_back({{"number", p.number},
                       {"name", p.name},
                       {"description", p.description},
                       {"files", p.files},
                       {"line", p.line}});
  }
  return items;
}

}  // namespace

int run_validate(const GlobalOptions& opts, const std::string& kind_name, const std::string& file) {
  auto kind = markdown::parse_artifact_kind(kind_name);
  if (!kind)
    throw CommandError{kUsage, "unknown artifact kind: " + kind_name,
                       "write `loopr validate plan|spec|phase FILE`"};
  ArtifactsConfig limits = artifact_limits(opts);
  std::filesystem::path path(file);
  if (path.is_relative() && !opts.directory.empty())
    path = std::filesystem::path(opts.directory) / path;
  std::string text = read_artifact(path, file);
  std::vector<markdown::Problem> problems = markdown::validate_artifact(*kind, text, limits);

  if (opts.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : problems)
      list.push_back(
          {{"line", p.line}, {"rule", markdown::to_string(p.rule)}, {"message", p.message}});
    nlohmann::json out{
        {"file", file},
        {"kind", kind_name},
        {"valid", problems.empty()},
        {"problems", list},
        {"items", problems.empty() ? items_json(*kind, text, limits) : nlohmann::json::array()}};
    // Replace, not throw: a file name need not be UTF-8.
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return problems.empty() ? kOk : kFailed;
  }
  std::cout << markdown::format_problems(file, problems);
  if (!problems.empty()) {
    std::cout.flush();
    return report(CommandError{kFailed,
                               file + " is not a valid " + kind_name + ": " +
                                   std::to_string(problems.size()) +
                                   (problems.size() == 1 ? " problem" : " problems"),
                               "fix them and run `loopr validate` again"});
  }
  if (!opts.quiet) std::cout << file << ": valid " << kind_name << "\n";
  return kOk;
}

namespace {

CommandRun define_validate(CLI::App& validate) {
  auto kind = std::make_shared<std::string>(), file = std::make_shared<std::string>();
  validate.add_option("kind", *kind, "plan | spec | phase")->required();
  validate.add_option("file", *file, "The artifact's markdown file")->required();
  return CommandRun([kind, file](Session& s) { return run_validate(s.opts, *kind, *file); });
}

}  // namespace

const Command kValidateCommand{"validate",
                               "Check the format of a plan, spec or phase artifact; prints "
                               "FILE:LINE: message per problem (exit 1 if any)",
                               false, Needs::nothing, define_validate};

}  // namespace loopr::cli
