// The artifacts of INTERFACE.md "Artifacts" (plan, spec, phase markdown), parsed from the
// cmark-gfm AST into typed documents and checked against every format rule in one pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/config.hpp>
#include <loopr/core/result.hpp>
#include <loopr/markdown/problem.hpp>

namespace loopr::markdown {

enum class ArtifactKind { plan, spec, phase };

const char* to_string(ArtifactKind kind);
/// `plan`, `spec` or `phase`; nullopt for anything else.
std::optional<ArtifactKind> parse_artifact_kind(std::string_view text);

/// A section (or the title) and where its heading is. `line` is 0 when the file lacks it.
struct SectionText {
  /// Title and `## Parent …` sections: their words as one line of plain text. Other sections:
  /// the markdown source under the heading, line endings normalised to '\n', blank lines around
  /// it trimmed (so lists and code blocks reach the child loop's prompt as written).
  std::string text;
  int line = 0;
};

/// One `- spec-<name>: <description>` item of a plan's `## Specs to Create`.
struct SpecItem {
  /// The name WITHOUT the `spec-` prefix (`- spec-cli-flag: …` → `cli-flag`); `[a-z0-9-]+`, so it
  /// is already a valid slug for the spec's artifact path.
  std::string name;
  /// The text after the colon as plain text: code spans and emphasis keep their words but lose
  /// their markers, line breaks become spaces.
  std::string description;
  /// Nested content of the item (sub-lists, further paragraphs) as plain text lines; often empty.
  std::string details;
  int index = 0;  ///< 1-based position in the list: the child loop's index (stable ids)
  int line = 0;
};

struct PlanDoc {
  SectionText title;
  SectionText overview;
  SectionText phases;  ///< the plan's own outline of the work (free text)
  SectionText success_criteria;
  SectionText specs_to_create;  ///< the raw section; its parsed items are `specs`
  std::vector<SpecItem> specs;  ///< only well-formed items (all of them when the plan is valid)
};

/// One `1. **Name**` item of a spec's `## Phases`.
struct PhaseItem {
  int number = 0;           ///< the number as written (1..n in a valid spec): the child's index
  std::string name;         ///< the bold text, plain, without a trailing colon
  std::string description;  ///< the rest of the item as plain text lines, `Files:` lines removed
  std::vector<std::string> files;  ///< from `- Files: a, b` (code-span markers removed)
  int line = 0;
};

struct SpecDoc {
  SectionText title;
  SectionText parent_plan;  ///< plain text, e.g. `.loopr/plans/001-x.plan.md`
  SectionText overview;
  SectionText phases_section;     ///< the raw `## Phases` section; its parsed items are `phases`
  std::vector<PhaseItem> phases;  ///< only well-formed items
};

struct PhaseDoc {
  SectionText title;
  SectionText parent_spec;  ///< plain text
  SectionText task;
  SectionText specific_work;
  SectionText success_criteria;
  /// `- Files: a, b` under `## Specific Work` (code-span markers removed): the files the phase
  /// owns, which its code loop may change although they are protected (core/protected_paths.hpp).
  std::vector<std::string> files;
};

/// A parsed artifact and every problem found in it (sorted by line). Parsing never fails: a
/// broken file still yields what could be read, so the messages can be precise.
template <typename Doc>
struct Checked {
  Doc doc;
  std::vector<Problem> problems;
  bool valid() const { return problems.empty(); }
};

/// Parse and check. `limits` gives the item maximum and the size limit (`artifacts:` config).
Checked<PlanDoc> check_plan(std::string_view text, const ArtifactsConfig& limits = {});
Checked<SpecDoc> check_spec(std::string_view text, const ArtifactsConfig& limits = {});
Checked<PhaseDoc> check_phase(std::string_view text, const ArtifactsConfig& limits = {});

/// The problems of an artifact of any kind (what `loopr validate KIND FILE` prints).
std::vector<Problem> validate_artifact(ArtifactKind kind, std::string_view text,
                                       const ArtifactsConfig& limits = {});

/// For the manager, which spawns children only from a valid artifact: the document, or an
/// `invalid_argument` Error whose message lists every problem as `FILE:LINE: message` lines.
Result<PlanDoc> read_plan(std::string_view text, std::string_view file,
                          const ArtifactsConfig& limits = {});
Result<SpecDoc> read_spec(std::string_view text, std::string_view file,
                          const ArtifactsConfig& limits = {});
Result<PhaseDoc> read_phase(std::string_view text, std::string_view file,
                            const ArtifactsConfig& limits = {});

}  // namespace loopr::markdown
