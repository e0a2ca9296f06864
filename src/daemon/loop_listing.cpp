#include "daemon/loop_listing.hpp"

#include <algorithm>
#include <charconv>

#include <loopr/core/ids.hpp>
#include <loopr/core/text.hpp>

#include "daemon/api.hpp"

namespace loopr::daemon {

namespace {

constexpr std::size_t kMaxLimit = 100000;

Error bad(const std::string& what) { return make_error(ErrorCode::invalid_argument, what); }

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// A JSON string as json_text() writes it: plain ASCII is copied; text with quotes, backslashes,
// control characters or other than ASCII (escapes, UTF-8 checks) is written by nlohmann.
void append_string(std::string& out, std::string_view text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) {
      out += json_text(nlohmann::json(text));
      return;
    }
  out += '"';
  out += text;
  out += '"';
}

void append_or_null(std::string& out, const std::string& text) {
  if (text.empty())
    out += "null";
  else
    append_string(out, text);
}

template <typename Int>
void append_int(std::string& out, Int n) {
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  out.append(buf, end);
}

// `,"name":` then the value: one field after the first.
void append_key(std::string& out, std::string_view name) {
  out += ",\"";
  out += name;
  out += "\":";
}

void put_string(std::string& out, std::string_view name, std::string_view text) {
  append_key(out, name);
  append_string(out, text);
}

void put_or_null(std::string& out, std::string_view name, const std::string& text) {
  append_key(out, name);
  append_or_null(out, text);
}

template <typename Int>
void put_int(std::string& out, std::string_view name, Int n) {
  append_key(out, name);
  append_int(out, n);
}

// One row: to_api_json()'s fields and the open question, in nlohmann's key order (sorted).
void append_interface_row(std::string& out, const Loop& l) {
  static_assert(std::size(kApiLoopFields) == 15,
                "a field was added to INTERFACE.md's loop: write it here too (the test compares "
                "this with to_api_json)");
  out += "{\"artifacts\":[";
  for (std::size_t i = 0; i < l.output_artifacts.size(); ++i) {
    if (i > 0) out += ',';
    append_string(out, l.output_artifacts[i]);
  }
  out += ']';
  put_or_null(out, "branch", l.branch);
  append_key(out, "cost_usd");
  out += nlohmann::json(l.usage.cost_usd).dump();
  put_string(out, "created_at", format_timestamp(l.created_at));
  if (l.end_reason == EndReason::none)
    put_or_null(out, "end_reason", "");
  else
    put_string(out, "end_reason", to_string(l.end_reason));
  put_string(out, "id", l.id);
  put_int(out, "input_tokens", l.usage.input_tokens);
  put_int(out, "iteration", l.iteration);
  put_int(out, "max_iterations", l.max_iterations);
  put_int(out, "output_tokens", l.usage.output_tokens);
  put_or_null(out, "parent_id", l.parent_id);
  if (std::string question = open_question(l); !question.empty())
    put_string(out, "question", question);
  put_string(out, "status", to_string(l.status));
  put_string(out, "type", to_string(l.type));
  put_string(out, "updated_at", format_timestamp(l.updated_at));
  put_or_null(out, "worktree", l.worktree);
  out += '}';
}

}  // namespace

std::string interface_page_text(const ListPage& page) {
  std::string out;
  out.reserve(64 + page.rows.size() * 400);
  out += "{\"loops\":[";
  for (std::size_t i = 0; i < page.rows.size(); ++i) {
    if (i > 0) out += ',';
    append_interface_row(out, *page.rows[i]);
  }
  out += ']';
  if (!page.next.empty()) {
    out += ",\"next\":";
    append_string(out, page.next);
  }
  out += '}';
  return out;
}

bool ListQuery::keeps(const Loop& loop) const {
  if (!plan.empty() && loop.plan_id != plan && loop.id != plan) return false;
  if (type && loop.type != *type) return false;
  if (!statuses.empty()) return statuses.count(loop.status) > 0;
  return all || loop.status != LoopStatus::invalidated;
}

Result<ListQuery> parse_list_query(const std::map<std::string, std::string>& query) {
  ListQuery q;
  auto flag = [&](const char* key) {
    auto it = query.find(key);
    return it != query.end() && it->second != "false" && it->second != "0";
  };
  q.all = flag("all");
  if (auto it = query.find("status"); it != query.end()) {
    for (const std::string& name : split_commas(it->second)) {
      auto status = parse_loop_status(name);
      if (!status)
        return bad("unknown status `" + name +
                   "` in status= (pending, running, paused, rebasing, blocked, awaiting_approval, "
                   "awaiting_answer, complete, failed, stopped, invalidated; several with commas)");
      q.statuses.insert(*status);
    }
    if (q.statuses.empty()) return bad("status= is empty (name one status or more, with commas)");
  }
  if (auto it = query.find("type"); it != query.end()) {
    q.type = parse_loop_type(it->second);
    if (!q.type)
      return bad("unknown type `" + it->second + "` in type= (plan, spec, phase or code)");
  }
  if (auto it = query.find("plan"); it != query.end()) {
    if (type_of_id(it->second) != LoopType::plan)
      return bad("plan= takes a plan's id such as 001, not `" + it->second + "`");
    q.plan = it->second;
  }
  if (auto it = query.find("after"); it != query.end()) {
    if (!type_of_id(it->second))
      return bad("after= takes a loop id (the `next` of the page before), not `" + it->second +
                 "`");
    q.after = it->second;
  }
  if (auto it = query.find("view"); it != query.end()) {
    if (it->second != "interface" && it->second != "full")
      return bad("view= takes `full` (the default) or `interface`, not `" + it->second + "`");
    q.interface_view = it->second == "interface";
  }
  if (auto it = query.find("limit"); it != query.end()) {
    const std::string& text = it->second;
    std::size_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxLimit)
      return bad("limit= takes a number from 1 to " + std::to_string(kMaxLimit) + ", not `" + text +
                 "`");
    q.limit = n;
  }
  return q;
}

void sort_tree_order(std::vector<Loop>& loops) {
  // Sort keys made once (tree_sort_key allocates), not at every comparison; records moved once.
  std::vector<std::pair<std::string, std::size_t>> keyed;
  keyed.reserve(loops.size());
  for (std::size_t i = 0; i < loops.size(); ++i) keyed.emplace_back(tree_sort_key(loops[i].id), i);
  std::sort(keyed.begin(), keyed.end());
  std::vector<Loop> sorted;
  sorted.reserve(loops.size());
  for (const auto& [key, i] : keyed) sorted.push_back(std::move(loops[i]));
  loops = std::move(sorted);
}

ListPage page_of(std::vector<Loop>& matched, const ListQuery& query) {
  sort_tree_order(matched);
  std::size_t first = 0;
  if (!query.after.empty()) {
    const std::string after = tree_sort_key(query.after);
    first = static_cast<std::size_t>(
        std::partition_point(matched.begin(), matched.end(),
                             [&](const Loop& l) { return tree_sort_key(l.id) <= after; }) -
        matched.begin());
  }
  const std::size_t left = matched.size() - first;
  const std::size_t n = query.limit == 0 ? left : std::min(query.limit, left);
  ListPage page;
  page.rows.reserve(n);
  for (std::size_t i = first; i < first + n; ++i) page.rows.push_back(&matched[i]);
  if (n < left && n > 0) page.next = page.rows.back()->id;
  return page;
}

std::map<std::string, std::span<const Loop>> tree_spans(const std::vector<Loop>& sorted) {
  std::map<std::string, std::span<const Loop>> out;
  std::size_t i = 0;
  while (i < sorted.size()) {
    const std::string& plan = sorted[i].type == LoopType::plan ? sorted[i].id : sorted[i].plan_id;
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j].plan_id == plan && sorted[j].id != plan) ++j;
    out.emplace(plan, std::span<const Loop>(sorted.data() + i, j - i));
    i = j;
  }
  return out;
}

}  // namespace loopr::daemon
