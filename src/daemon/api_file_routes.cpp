// The control API's routes about a loop's files: its artifact, a file as its branches hold it,
// its diff and an iteration's files. Each goes through its one reader (loopr/daemon/
// loop_files.hpp: git/artifact.hpp, core/iteration_files.hpp), the same the web page calls, off
// the io thread. What they read is model-written: answered as text, never interpreted.
#include <algorithm>

#include <loopr/api/files.hpp>
#include <loopr/api/views.hpp>
#include <loopr/daemon/http_common.hpp>
#include <loopr/daemon/loop_files.hpp>

#include "daemon/api_routes.hpp"

namespace loopr::daemon {

namespace {

Response no_loop(const std::string& id) {
  return error_response(404, "no loop " + id + " (see `loopr list --all`)");
}

std::string query_of(const Request& req, const char* key) {
  auto it = req.query.find(key);
  return it == req.query.end() ? std::string() : it->second;
}

// The loop as the readers take it (its branches, worktree and plan), and its plan's base branch
// (where a diff starts) when it has one.
struct LoopFiles {
  api::LoopRow row;
  std::vector<std::string> artifacts;  ///< its output artifacts, then its input artifact
  std::string base;
};

awaitable<Result<LoopFiles>> loop_files_of(Api::State& s, const std::string& id) {
  std::shared_ptr<const Config> config = s.ctx.config;
  auto get = [&s, &id, config]() -> Result<LoopFiles> {
    TaskStore& store = s.ctx.journal.store();
    LOOPR_ASSIGN(Loop loop, store.get_loop(id));
    LoopFiles out;
    out.row = api::row_of(loop);
    out.artifacts = loop.output_artifacts;
    if (!loop.input_artifact.empty()) out.artifacts.push_back(loop.input_artifact);
    out.base = config->base_branch;
    if (auto plan = store.get_loop(loop.plan_id); plan && !plan->tree.base_branch.empty())
      out.base = plan->tree.base_branch;
    return out;
  };
  co_return co_await run_blocking(s.reads(), get);
}

}  // namespace

// GET /v1/loops/{id}/artifact[?path=REL]: one of the loop's artifacts (its first output artifact
// unless `path` names another of its own), from its worktree or as committed.
awaitable<Response> get_artifact(Api::State& s, Request& req, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return no_loop(id);
  auto loop = co_await loop_files_of(s, id);
  if (!loop) co_return error_of(loop.error());
  std::string rel = query_of(req, "path");
  if (rel.empty() && !loop->row.artifacts.empty()) rel = loop->row.artifacts.front();
  const auto& own = loop->artifacts;
  if (rel.empty() || std::find(own.begin(), own.end(), rel) == own.end())
    co_return error_response(404, (rel.empty() ? "loop " + id + " has no artifact"
                                               : rel + " is not an artifact of loop " + id) +
                                      " (`loopr show " + id + "` lists its artifacts)");
  const RepoPaths paths = s.ctx.paths;
  const api::LoopRow row = loop->row;
  auto read = [paths, row, rel] { return read_artifact(paths, row, rel); };
  co_return Response{200, api::to_json(co_await run_blocking(s.reads(), read))};
}

// GET /v1/loops/{id}/file?path=REL: a file as the loop's branches have committed it.
awaitable<Response> get_file(Api::State& s, Request& req, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return no_loop(id);
  const std::string rel = query_of(req, "path");
  if (rel.empty())
    co_return error_response(400, "path is missing (GET /v1/loops/" + id + "/file?path=REL)");
  auto loop = co_await loop_files_of(s, id);
  if (!loop) co_return error_of(loop.error());
  const RepoPaths paths = s.ctx.paths;
  const api::LoopRow row = loop->row;
  auto read = [paths, row, rel] { return read_committed(paths, row, rel); };
  co_return Response{200, api::to_json(co_await run_blocking(s.reads(), read))};
}

// GET /v1/loops/{id}/diff: the loop's work as a diff from where it started.
awaitable<Response> get_diff(Api::State& s, Request&, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return no_loop(id);
  auto loop = co_await loop_files_of(s, id);
  if (!loop) co_return error_of(loop.error());
  const RepoPaths paths = s.ctx.paths;
  const api::LoopRow row = loop->row;
  const std::string base = loop->base;
  auto read = [paths, row, base] { return read_loop_diff(paths, row, base); };
  co_return Response{200, api::to_json(co_await run_blocking(s.reads(), read))};
}

// GET /v1/loops/{id}/iterations/{n}[?whole=true]: iteration n's files (each up to 1 MiB, or
// 16 MiB with `whole`), of an iteration it ran or the one it runs now.
awaitable<Response> get_iteration(Api::State& s, Request& req, const Params& p) {
  const std::string& id = p.at("id");
  if (!valid_id(id)) co_return no_loop(id);
  const std::string& text = p.at("n");
  int n = 0;
  if (text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos ||
      text.empty() || (n = std::stoi(text)) < 1)
    co_return error_response(404, "no iteration " + text + " of loop " + id);
  const std::string whole = query_of(req, "whole");
  if (!whole.empty() && whole != "true" && whole != "false")
    co_return error_response(400, "whole must be true or false, not " + whole);
  auto loop = co_await loop_files_of(s, id);
  if (!loop) co_return error_of(loop.error());
  // The one running now is the one after those it has run: its files are written as it goes.
  if (n > loop->row.iteration + 1)
    co_return error_response(404, "no iteration " + text + " of loop " + id + " (it has run " +
                                      std::to_string(loop->row.iteration) + ")");
  const RepoPaths paths = s.ctx.paths;
  const std::size_t max_bytes = whole == "true" ? kIterationFileReadBytes : kIterationFilePageBytes;
  auto read = [paths, id, n, max_bytes] {
    return iteration_view(read_iteration(paths, id, n, max_bytes));
  };
  co_return Response{200, api::to_json(co_await run_blocking(s.reads(), read))};
}

}  // namespace loopr::daemon
