// What `GET /v1/loops` lists: the query's filters (status, plan, type), tree order and pages.
// Pure functions over loop records, so the rules are unit-tested without a daemon.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <loopr/core/loop.hpp>
#include <loopr/core/result.hpp>

namespace loopr::daemon {

struct ListQuery {
  bool all = false;               ///< `all=true`: invalidated loops too (without `status`)
  std::set<LoopStatus> statuses;  ///< `status=a,b`: only these (empty: every one but invalidated)
  std::optional<LoopType> type;   ///< `type=code`
  std::string plan;               ///< `plan=001`: that plan's tree only
  std::string after;              ///< `after=ID`: the rows after ID in tree order (the next page)
  std::size_t limit = 0;          ///< `limit=N`: at most N rows (0: all)
  /// `view=interface`: each row exactly INTERFACE.md's loop (plus `question` while it waits for
  /// an answer), no tree fields: what `loopr list --json` prints, passed through as it comes.
  bool interface_view = false;

  /// Whether `loop` is one the query asks for (before paging).
  bool keeps(const Loop& loop) const;
  /// Whether the listing needs every loop of each plan row's tree (for its verdict) that the
  /// filters may have left out.
  bool filtered() const { return !statuses.empty() || type.has_value(); }
  /// Whether plan rows carry their tree's fields (and so need their whole tree).
  bool tree_fields() const { return !interface_view; }
};

/// The query of `GET /v1/loops`; invalid_argument naming the parameter and what it takes.
Result<ListQuery> parse_list_query(const std::map<std::string, std::string>& query);

struct ListPage {
  std::vector<const Loop*> rows;  ///< tree order (`tree_sort_key`), pointing into `matched`
  std::string next;               ///< `after=` for the next page; empty on the last one
};

/// Sorts `matched` (the loops the query keeps) into tree order, in place, and pages it: the rows
/// from `after` on, at most `limit` of them.
ListPage page_of(std::vector<Loop>& matched, const ListQuery& query);

/// The body of an interface view's page (`view=interface`): `{"loops": [...], "next": ...}`,
/// each row to_api_json() with the open question (open_question(), no `answer`), byte for byte
/// what nlohmann writes for those objects, written without building them (`list --json` with
/// 2,000 loops).
std::string interface_page_text(const ListPage& page);

/// Sorts `loops` into tree order in place: each plan's tree is then one run of records, the plan
/// first (tree_spans).
void sort_tree_order(std::vector<Loop>& loops);

/// Each plan's run of records in `sorted` (sort_tree_order), by plan id.
std::map<std::string, std::span<const Loop>> tree_spans(const std::vector<Loop>& sorted);

}  // namespace loopr::daemon
