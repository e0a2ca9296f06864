// The spec artifact: three sections, and the numbered `## Phases` list the manager spawns phase
// loops from (`1. **Name**`, description lines, optional `- Files: a, b`).
#include <algorithm>
#include <map>

#include <loopr/markdown/artifacts.hpp>

#include "markdown/artifact_parse.hpp"
#include "markdown/files_line.hpp"
#include "markdown/plain_text.hpp"

namespace loopr::markdown {
namespace {

constexpr SectionRule kParentPlan{
    "Parent Plan",
    "the path of the plan this spec implements, e.g. `.loopr/plans/001-add-a-flag.plan.md`"};
constexpr SectionRule kOverview{"Overview",
                                "what this spec covers, where its boundaries are and the design "
                                "decisions it makes"};
constexpr SectionRule kPhases{"Phases",
                              "numbered items `1. **Name**`, each followed by indented description "
                              "lines and an optional `- Files: a, b`"};

constexpr std::string_view kItemShape =
    "`1. **Name**` followed by indented description lines and an optional `- Files: a, b`";

// `**Name** — does x` and `**Name**: does x` put the description on the name's line; the
// separator is punctuation, not description.
std::string_view strip_separator(std::string_view text) {
  while (true) {
    text = trim(text);
    if (!text.empty() && (text.front() == ':' || text.front() == '-')) {
      text.remove_prefix(1);
    } else if (text.rfind("—", 0) == 0 || text.rfind("–", 0) == 0) {
      text.remove_prefix(std::string_view("—").size());
    } else {
      return text;
    }
  }
}

// A short phase name taken from what the model wrote: its first words, up to a colon or period.
std::string suggested_name(std::string_view text) {
  text = text.substr(0, std::min(text.find(':'), text.find(". ")));
  std::size_t end = 0;
  for (int spaces = 0; end < text.size(); ++end)
    if (text[end] == ' ' && ++spaces == 4) break;
  std::string name(trim(text.substr(0, end)));
  while (!name.empty() && (name.back() == '.' || name.back() == ',')) name.pop_back();
  return name.empty() ? "Name" : name;
}

class PhaseListReader {
 public:
  PhaseListReader(SpecDoc& doc, std::vector<Problem>& problems, const LineIndex& lines,
                  const ArtifactsConfig& limits)
      : doc_(doc), problems_(problems), lines_(lines), limits_(limits) {}

  void read(const Section& section) {
    int bullet_line = 0;
    for (cmark_node* block : section.blocks) {
      if (!is_type(block, CMARK_NODE_LIST)) continue;  // quotes and code blocks are not items
      if (cmark_node_get_list_type(block) != CMARK_ORDERED_LIST) {
        if (bullet_line == 0) bullet_line = cmark_node_get_start_line(block);
        continue;
      }
      int position = cmark_node_get_list_start(block);
      for (cmark_node* item : children(block)) read_item(item, position++);
    }
    if (count_ > 0 || is_empty_body(section.blocks)) return;
    std::string message =
        "section `## Phases` has no numbered items: list each phase as " + std::string(kItemShape);
    if (bullet_line > 0)
      message += " (the list at line " + std::to_string(bullet_line) +
                 " uses bullets: number its items `1.`, `2.`, … instead)";
    problems_.push_back({section.heading.line, Rule::no_items, message});
  }

 private:
  void read_item(cmark_node* item, int fallback_number) {
    const int line = cmark_node_get_start_line(item);
    const int expected = ++count_;
    const int number = written_item_number(item, lines_).value_or(fallback_number);
    const std::string n = std::to_string(number);
    if (number != expected)
      problems_.push_back({line, Rule::bad_number,
                           "phase number " + n + " should be " + std::to_string(expected) +
                               ": number the phases 1, 2, 3, … in order, without gaps or repeats"});
    if (expected == limits_.max_items + 1)
      problems_.push_back({line, Rule::too_many_items,
                           "more than " + std::to_string(limits_.max_items) +
                               " phases: merge small phases so there are at most " +
                               std::to_string(limits_.max_items)});

    cmark_node* first = cmark_node_first_child(item);
    if (!is_type(first, CMARK_NODE_PARAGRAPH)) {
      std::string text = first ? collapse_spaces(block_text(first)) : "";
      problems_.push_back(
          {line, Rule::malformed_item,
           "phase " + n + (text.empty() ? " is empty" : " `" + excerpt(text) + "` is not text") +
               ": write " + std::string(kItemShape)});
      return;
    }
    cmark_node* lead = cmark_node_first_child(first);
    while (is_type(lead, CMARK_NODE_TEXT) && trim(cmark_node_get_literal(lead)).empty())
      lead = cmark_node_next(lead);
    std::string name;
    if (is_type(lead, CMARK_NODE_STRONG)) {
      name = collapse_spaces(inline_text(lead));
      while (!name.empty() && (name.back() == ':' || name.back() == ' ')) name.pop_back();
    }
    if (name.empty()) {
      std::string text = collapse_spaces(inline_text(first));
      problems_.push_back({line, Rule::malformed_item,
                           "phase " + n + " `" + excerpt(text) +
                               "` does not start with a bold name: write `" + n + ". **" +
                               suggested_name(text) +
                               "**` and put the description on the indented lines below it"});
      return;
    }

    PhaseItem phase{number, name, {}, {}, line};
    read_description(first, lead, phase);
    if (accepted(phase, n)) doc_.phases.push_back(std::move(phase));
  }

  // The rest of the item's first paragraph (after the bold name) and its further blocks; a
  // nested list stays a list, except its `Files:` lines.
  static void read_description(cmark_node* first, cmark_node* lead, PhaseItem& phase) {
    std::vector<std::string> description;
    add_lines(strip_separator(inline_text_from(cmark_node_next(lead))), phase, description);
    for (cmark_node* block = cmark_node_next(first); block; block = cmark_node_next(block)) {
      if (!is_type(block, CMARK_NODE_LIST)) {
        add_lines(block_text(block), phase, description);
        continue;
      }
      for (cmark_node* sub : children(block)) {
        std::string text = block_text(sub);
        if (starts_with_files(trim(text))) {
          add_lines(text, phase, description);
        } else {
          std::string indented;
          for (char c : text) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
          description.push_back("- " + indented);
        }
      }
    }
    for (const std::string& d : description) {
      if (!phase.description.empty()) phase.description += '\n';
      phase.description += d;
    }
  }

  // Whether the phase has a description and a name of its own; a problem for each it lacks.
  bool accepted(const PhaseItem& phase, const std::string& n) {
    const int line = phase.line;
    const std::string& name = phase.name;
    bool ok = true;
    if (phase.description.empty()) {
      problems_.push_back({line, Rule::missing_description,
                           "phase " + n + " `" + excerpt(name) + "` has no description: under `" +
                               n + ". **" + excerpt(name, 40) +
                               "**` write, on indented lines, what this phase changes"});
      ok = false;
    }
    auto [it, inserted] = first_line_.emplace(lower(name), line);
    if (!inserted) {
      problems_.push_back({line, Rule::duplicate_name,
                           "phase name `" + excerpt(name) + "` is used twice (first at line " +
                               std::to_string(it->second) +
                               "): give each phase its own name, or merge the two"});
      ok = false;
    }
    return ok;
  }

  // Description lines, except `Files: a, b` (with or without a bullet), which fill `files`.
  static void add_lines(std::string_view text, PhaseItem& phase, std::vector<std::string>& out) {
    while (true) {
      std::size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      std::string_view bare = trim(line);
      if (bare.rfind("- ", 0) == 0 || bare.rfind("* ", 0) == 0) bare = trim(bare.substr(2));
      if (starts_with_files(bare)) {
        for (std::string& f : split_files(bare.substr(6))) phase.files.push_back(std::move(f));
      } else if (!bare.empty()) {
        out.emplace_back(trim(line));
      }
      if (nl == std::string_view::npos) return;
      text.remove_prefix(nl + 1);
    }
  }

  SpecDoc& doc_;
  std::vector<Problem>& problems_;
  const LineIndex& lines_;
  const ArtifactsConfig& limits_;
  int count_ = 0;
  std::map<std::string, int> first_line_;
};

}  // namespace

Checked<SpecDoc> check_spec(std::string_view text, const ArtifactsConfig& limits) {
  ArtifactParse parse(text, limits);
  Checked<SpecDoc> out;
  auto& p = parse.problems;
  const Outline& o = parse.outline;
  out.doc.title = o.title("Parse the --shout flag", p);
  const Section* parent = o.require(kParentPlan, p);
  const Section* overview = o.require(kOverview, p);
  const Section* phases = o.require(kPhases, p);
  out.doc.parent_plan = {o.plain_of(parent), parent ? parent->heading.line : 0};
  out.doc.overview = {o.source_of(overview), overview ? overview->heading.line : 0};
  out.doc.phases_section = {o.source_of(phases), phases ? phases->heading.line : 0};
  if (phases) PhaseListReader(out.doc, p, parse.lines, limits).read(*phases);
  sort_problems(p);
  out.problems = std::move(p);
  return out;
}

}  // namespace loopr::markdown
