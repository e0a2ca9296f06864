#include <cctype>
#include <cstdio>

#include <loopr/core/ids.hpp>

namespace loopr {
namespace {

std::string three_digits(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%03d", n);
  return buf;
}

// Splits `001-002-003` into its numeric parts; false if any part is not all digits.
bool split_parts(std::string_view id, std::vector<std::string_view>& parts) {
  parts.clear();
  std::size_t start = 0;
  while (true) {
    std::size_t dash = id.find('-', start);
    std::string_view part =
        id.substr(start, dash == std::string_view::npos ? id.npos : dash - start);
    if (part.size() < 3) return false;
    for (char c : part)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    parts.push_back(part);
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  return parts.size() >= 1 && parts.size() <= 3;
}

constexpr std::string_view kCodePrefix = "code-";
constexpr std::string_view kFixPrefix = "fix-";

// `fix-001-002` → {"001", "002"}: a plan's integration fix loop; nullopt for other shapes.
std::optional<std::pair<std::string_view, std::string_view>> split_fix(std::string_view id) {
  if (!id.starts_with(kFixPrefix)) return std::nullopt;
  id.remove_prefix(kFixPrefix.size());
  std::vector<std::string_view> parts;
  if (!split_parts(id, parts) || parts.size() != 2) return std::nullopt;
  return std::make_pair(parts[0], parts[1]);
}

}  // namespace

std::string plan_id(int number) { return three_digits(number); }

std::string child_id(std::string_view parent_id, LoopType child_type, int index) {
  if (child_type == LoopType::code) return std::string(kCodePrefix) + std::string(parent_id);
  return std::string(parent_id) + "-" + three_digits(index);
}

std::string fix_loop_id(std::string_view plan_id, int number) {
  return std::string(kFixPrefix) + std::string(plan_id) + "-" + three_digits(number);
}

bool is_fix_loop_id(std::string_view id) { return split_fix(id).has_value(); }

std::string root_plan_id(std::string_view id) {
  if (auto fix = split_fix(id)) return std::string(fix->first);
  if (id.starts_with(kCodePrefix)) id.remove_prefix(kCodePrefix.size());
  return std::string(id.substr(0, id.find('-')));
}

std::optional<LoopType> type_of_id(std::string_view id) {
  if (split_fix(id)) return LoopType::code;
  std::vector<std::string_view> parts;
  if (id.starts_with(kCodePrefix)) {
    id.remove_prefix(kCodePrefix.size());
    if (split_parts(id, parts) && parts.size() == 3) return LoopType::code;
    return std::nullopt;
  }
  if (!split_parts(id, parts)) return std::nullopt;
  switch (parts.size()) {
    case 1:
      return LoopType::plan;
    case 2:
      return LoopType::spec;
    case 3:
      return LoopType::phase;
    default:
      return std::nullopt;
  }
}

std::optional<std::string> parent_of_id(std::string_view id) {
  auto type = type_of_id(id);
  if (!type) return std::nullopt;
  if (*type == LoopType::plan) return std::string();
  if (auto fix = split_fix(id)) return std::string(fix->first);
  if (*type == LoopType::code) return std::string(id.substr(kCodePrefix.size()));
  return std::string(id.substr(0, id.rfind('-')));
}

bool is_descendant(std::string_view id, std::string_view ancestor) {
  if (id == ancestor) return false;
  if (auto fix = split_fix(id)) return fix->first == ancestor;
  if (id.starts_with(kCodePrefix)) {
    id.remove_prefix(kCodePrefix.size());
    if (id == ancestor) return true;  // the code loop of a phase
  }
  return id.size() > ancestor.size() && id.starts_with(ancestor) && id[ancestor.size()] == '-';
}

std::string tree_sort_key(std::string_view id) {
  // After everything else of its plan: '~' sorts after '-' and the digits.
  if (auto fix = split_fix(id)) return std::string(fix->first) + "~" + std::string(fix->second);
  if (id.starts_with(kCodePrefix)) return std::string(id.substr(kCodePrefix.size())) + "!";
  return std::string(id);
}

std::string slugify(std::string_view text, std::size_t max_len) {
  std::string out;
  bool dash = false;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) && c < 128) {
      if (dash && !out.empty()) out += '-';
      dash = false;
      out += static_cast<char>(std::tolower(c));
      if (out.size() >= max_len) break;
    } else {
      dash = true;
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? std::string("untitled") : out;
}

}  // namespace loopr
