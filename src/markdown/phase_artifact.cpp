// The phase artifact: the single task a code loop implements, in four sections.
#include <loopr/markdown/artifacts.hpp>

#include "markdown/artifact_parse.hpp"
#include "markdown/files_line.hpp"
#include "markdown/plain_text.hpp"

namespace loopr::markdown {
namespace {

constexpr SectionRule kParentSpec{
    "Parent Spec",
    "the path of the spec this phase belongs to, e.g. `.loopr/specs/001-001-cli-flag.spec.md`"};
constexpr SectionRule kTask{"Task", "one paragraph stating the single task of this phase"};
constexpr SectionRule kSpecificWork{
    "Specific Work", "a bullet list of the concrete changes: files, functions, tests"};
constexpr SectionRule kSuccess{"Success Criteria",
                               "a bullet list of checks that prove the phase is done, e.g. the "
                               "test command that must pass"};

// `Files: a, b` lines (a bullet or a paragraph line, in lists at any depth; never in code
// blocks or quotes): the files this phase owns.
void collect_files(cmark_node* node, std::vector<std::string>& out) {
  if (is_type(node, CMARK_NODE_PARAGRAPH)) {
    std::string text = inline_text(node);
    std::string_view rest = text;
    while (!rest.empty()) {
      std::size_t nl = rest.find('\n');
      std::string_view bare = trim(rest.substr(0, nl));
      if (bare.rfind("- ", 0) == 0 || bare.rfind("* ", 0) == 0) bare = trim(bare.substr(2));
      if (starts_with_files(bare))
        for (std::string& f : split_files(bare.substr(6))) out.push_back(std::move(f));
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
    return;
  }
  if (is_type(node, CMARK_NODE_LIST) || is_type(node, CMARK_NODE_ITEM))
    for (cmark_node* child : children(node)) collect_files(child, out);
}

}  // namespace

Checked<PhaseDoc> check_phase(std::string_view text, const ArtifactsConfig& limits) {
  ArtifactParse parse(text, limits);
  Checked<PhaseDoc> out;
  auto& p = parse.problems;
  const Outline& o = parse.outline;
  out.doc.title = o.title("Parse the flag", p);
  const Section* parent = o.require(kParentSpec, p);
  const Section* task = o.require(kTask, p);
  const Section* work = o.require(kSpecificWork, p);
  const Section* success = o.require(kSuccess, p);
  out.doc.parent_spec = {o.plain_of(parent), parent ? parent->heading.line : 0};
  out.doc.task = {o.source_of(task), task ? task->heading.line : 0};
  out.doc.specific_work = {o.source_of(work), work ? work->heading.line : 0};
  out.doc.success_criteria = {o.source_of(success), success ? success->heading.line : 0};
  if (work)
    for (cmark_node* block : work->blocks) collect_files(block, out.doc.files);
  sort_problems(p);
  out.problems = std::move(p);
  return out;
}

}  // namespace loopr::markdown
