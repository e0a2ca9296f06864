#include <cctype>
#include <charconv>
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
bool split_parts(std::string_view id, std::vector<std::string_view>& parts,
                 std::size_t max_parts = 3) {
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
  return parts.size() >= 1 && parts.size() <= max_parts;
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

// `code-001-002-003` → {"001-002-003", 1}; `code-001-002-003-004` → {"001-002-003", 4} (the
// phase's code loop of a later generation); nullopt for other shapes.
std::optional<std::pair<std::string_view, int>> split_code(std::string_view id) {
  if (!id.starts_with(kCodePrefix)) return std::nullopt;
  id.remove_prefix(kCodePrefix.size());
  std::vector<std::string_view> parts;
  if (!split_parts(id, parts, 4) || parts.size() < 3) return std::nullopt;
  if (parts.size() == 3) return std::make_pair(id, 1);
  int index = 0;
  auto [end, ec] = std::from_chars(parts[3].data(), parts[3].data() + parts[3].size(), index);
  if (ec != std::errc() || end != parts[3].data() + parts[3].size() || index < 2)
    return std::nullopt;  // too large, or `-001` (the first generation has no suffix)
  return std::make_pair(id.substr(0, id.rfind('-')), index);
}

}  // namespace

std::string plan_id(int number) { return three_digits(number); }

std::string child_id(std::string_view parent_id, LoopType child_type, int index) {
  if (child_type == LoopType::code) {
    // The first generation's is `code-<phase>` (what every earlier loopr made); a phase that
    // iterated again after it had its code loop gets `code-<phase>-NNN`, a fresh id.
    std::string id = std::string(kCodePrefix) + std::string(parent_id);
    return index <= 1 ? id : id + "-" + three_digits(index);
  }
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
    if (split_code(id)) return LoopType::code;
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
  if (auto code = split_code(id)) return std::string(code->first);
  return std::string(id.substr(0, id.rfind('-')));
}

bool is_descendant(std::string_view id, std::string_view ancestor) {
  if (id == ancestor) return false;
  if (auto fix = split_fix(id)) return fix->first == ancestor;
  if (auto code = split_code(id)) {
    if (code->first == ancestor) return true;  // the code loop of a phase
    id = code->first;
  }
  return id.size() > ancestor.size() && id.starts_with(ancestor) && id[ancestor.size()] == '-';
}

std::string tree_sort_key(std::string_view id) {
  // After everything else of its plan: '~' sorts after '-' and the digits.
  if (auto fix = split_fix(id)) return std::string(fix->first) + "~" + std::string(fix->second);
  if (auto code = split_code(id))
    return std::string(code->first) + "!" + (code->second > 1 ? three_digits(code->second) : "");
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
