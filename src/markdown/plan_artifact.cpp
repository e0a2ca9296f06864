// The plan artifact: four sections, and the `## Specs to Create` list the manager spawns spec
// loops from (`- spec-<name>: <description>`).
#include <map>

#include <loopr/core/ids.hpp>
#include <loopr/markdown/artifacts.hpp>

#include "markdown/artifact_parse.hpp"
#include "markdown/plain_text.hpp"

namespace loopr::markdown {
namespace {

constexpr SectionRule kOverview{"Overview",
                                "two to five sentences on what the plan changes and why"};
constexpr SectionRule kPhases{"Phases",
                              "the order of the work as a short numbered list, one line per step"};
constexpr SectionRule kSuccess{"Success Criteria",
                               "a bullet list of observable checks that prove the request is done "
                               "(commands to run, behaviour to see)"};
constexpr SectionRule kSpecs{
    "Specs to Create",
    "one line per spec: `- spec-<name>: <description>`, e.g. "
    "`- spec-cli-flag: Parse the new flag and pass it to the output code`"};

constexpr std::string_view kItemShape = "`- spec-<name>: <description>`";

bool is_spec_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

// A name the model could use instead of what it wrote, for the message.
std::string suggested_name(std::string_view written) {
  std::string slug = slugify(written, 30);
  return slug.empty() ? "<name>" : slug;
}

// The words before the first colon, or the first three words, as the base of a suggested name.
std::string_view name_part(std::string_view text) {
  std::size_t colon = text.find(':');
  if (colon != std::string_view::npos) return text.substr(0, colon);
  std::size_t end = 0;
  for (int spaces = 0; end < text.size(); ++end)
    if (text[end] == ' ' && ++spaces == 3) break;
  return text.substr(0, end);
}

class SpecListReader {
 public:
  SpecListReader(PlanDoc& doc, std::vector<Problem>& problems, const ArtifactsConfig& limits)
      : doc_(doc), problems_(problems), limits_(limits) {}

  void read(const Section& section) {
    for (cmark_node* block : section.blocks) {
      // Only lists directly in the section hold specs: a `- spec-x:` line in a quote or a code
      // block is an example, not an item.
      if (!is_type(block, CMARK_NODE_LIST)) continue;
      for (cmark_node* item : children(block)) read_item(item);
    }
    if (count_ == 0 && !is_empty_body(section.blocks))
      problems_.push_back({section.heading.line, Rule::no_items,
                           "section `## Specs to Create` has no list items: list each spec on its "
                           "own line as " +
                               std::string(kItemShape)});
  }

 private:
  void read_item(cmark_node* item) {
    const int line = cmark_node_get_start_line(item);
    const int index = ++count_;
    if (index == limits_.max_items + 1)
      problems_.push_back({line, Rule::too_many_items,
                           "more than " + std::to_string(limits_.max_items) +
                               " specs: merge related specs so there are at most " +
                               std::to_string(limits_.max_items)});

    cmark_node* first = cmark_node_first_child(item);
    std::string text = first ? collapse_spaces(block_text(first)) : "";
    if (text.empty()) {
      problems_.push_back({line, Rule::malformed_item,
                           "empty list item: write " + std::string(kItemShape) + " or remove it"});
      return;
    }
    if (!is_type(first, CMARK_NODE_PARAGRAPH)) {  // e.g. `- ## spec-x` or a code block
      problems_.push_back({line, Rule::malformed_item,
                           "`" + excerpt(text) + "` is not a spec item: write it as plain text, " +
                               std::string(kItemShape)});
      return;
    }
    if (lower(text).rfind("spec-", 0) != 0) {
      problems_.push_back(
          {line, Rule::malformed_item,
           "`" + excerpt(text) + "` is not a spec item: write " + std::string(kItemShape) +
               " with a name of lower-case letters, digits and dashes, e.g. `- spec-" +
               suggested_name(name_part(text)) + ": …`"});
      return;
    }
    std::size_t colon = text.find(':');
    if (colon == std::string::npos) {
      problems_.push_back({line, Rule::malformed_item,
                           "`" + excerpt(text) + "` has no colon after the spec name: write " +
                               std::string(kItemShape)});
      return;
    }
    std::string written = std::string(trim(std::string_view(text).substr(0, colon)));
    std::string name = written.substr(5);  // after `spec-`
    std::string description = std::string(trim(std::string_view(text).substr(colon + 1)));
    bool ok = true;
    if (written.rfind("spec-", 0) != 0 || !is_spec_name(name)) {
      problems_.push_back({line, Rule::bad_name,
                           "spec name `" + excerpt(written) +
                               "` may only use lower-case letters, digits and dashes after "
                               "`spec-`: write `- spec-" +
                               suggested_name(name) + ": …`"});
      ok = false;
    }
    if (description.empty()) {
      problems_.push_back({line, Rule::missing_description,
                           "spec `" + excerpt(written) + "` has no description: write `- " +
                               excerpt(written) + ": <one sentence on what this spec delivers>`"});
      ok = false;
    }
    if (!ok) return;
    auto [it, inserted] = first_line_.emplace(name, line);
    if (!inserted) {
      problems_.push_back({line, Rule::duplicate_name,
                           "spec name `spec-" + name + "` is used twice (first at line " +
                               std::to_string(it->second) +
                               "): give each spec its own name, or merge the two"});
      return;
    }
    std::string details;
    for (cmark_node* block = cmark_node_next(first); block; block = cmark_node_next(block)) {
      if (!details.empty()) details += '\n';
      details += block_text(block);
    }
    doc_.specs.push_back(SpecItem{name, description, details, index, line});
  }

  PlanDoc& doc_;
  std::vector<Problem>& problems_;
  const ArtifactsConfig& limits_;
  int count_ = 0;
  std::map<std::string, int> first_line_;
};

}  // namespace

Checked<PlanDoc> check_plan(std::string_view text, const ArtifactsConfig& limits) {
  ArtifactParse parse(text, limits);
  Checked<PlanDoc> out;
  auto& p = parse.problems;
  const Outline& o = parse.outline;
  out.doc.title = o.title("Add a --shout flag to greet", p);
  const Section* overview = o.require(kOverview, p);
  const Section* phases = o.require(kPhases, p);
  const Section* success = o.require(kSuccess, p);
  const Section* specs = o.require(kSpecs, p);
  out.doc.overview = {o.source_of(overview), overview ? overview->heading.line : 0};
  out.doc.phases = {o.source_of(phases), phases ? phases->heading.line : 0};
  out.doc.success_criteria = {o.source_of(success), success ? success->heading.line : 0};
  out.doc.specs_to_create = {o.source_of(specs), specs ? specs->heading.line : 0};
  if (specs) SpecListReader(out.doc, p, limits).read(*specs);
  sort_problems(p);
  out.problems = std::move(p);
  return out;
}

}  // namespace loopr::markdown
