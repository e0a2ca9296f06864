// The web UI's routes (web_ui.hpp). Thin: check access, ask the control API (Api::handle, the
// same calls as the CLI), read files on the pool, render with web_pages, answer.
#include "daemon/web_ui.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <set>

#include <loopr/api/views.hpp>
#include <loopr/core/embedded.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/git/branches.hpp>
#include <loopr/git/repository.hpp>

#include "daemon/http_common.hpp"
#include "daemon/web_html.hpp"
#include "daemon/web_pages.hpp"

namespace loopr::daemon {

const std::vector<EmbeddedFile>& embedded_web_assets();

namespace {

using nlohmann::json;

constexpr std::size_t kMaxFileBytes = 1 << 20;   // an artifact or transcript file shown
constexpr std::size_t kMaxPlansWithDetail = 20;  // plans whose forecast the tree page shows

Response html_response(int status, std::string html) {
  Response r;
  r.status = status;
  r.text = std::move(html);
  r.content_type = "text/html; charset=utf-8";
  return r;
}

Response redirect(const std::string& location) {
  Response r;
  r.status = 303;
  r.text = std::string();
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("Location", location);
  return r;
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

/// At most kMaxFileBytes of a file; nullopt when it cannot be opened.
web::ShownFile read_shown(const std::filesystem::path& p, std::string shown_path) {
  web::ShownFile f;
  f.path = std::move(shown_path);
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    f.problem = "(no " + p.filename().string() + ")";
    return f;
  }
  std::string text(kMaxFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxFileBytes) {
    text.resize(kMaxFileBytes);
    f.truncated = true;
  }
  f.text = std::move(text);
  return f;
}

/// An artifact: from the loop's worktree while it has one, else as committed on its branch, on
/// its plan's integration branch, or in the main work tree (merged).
web::ShownFile read_artifact(const RepoPaths& paths, const api::LoopRow& loop,
                             const std::string& rel) {
  const std::string& worktree = loop.worktree;
  const bool inside = !rel.empty() && rel.front() != '/' && rel.find("..") == std::string::npos;
  if (!worktree.empty() && inside) {
    auto f = read_shown(std::filesystem::path(worktree) / rel, rel);
    if (f.text) return f;
  }
  web::ShownFile f;
  f.path = rel;
  auto repo = git::Repository::open(paths.root);
  if (!repo) {
    f.problem = repo.error().message;
    return f;
  }
  std::vector<std::string> branches;
  if (!loop.branch.empty()) branches.push_back(loop.branch);
  branches.push_back(git::archive_branch(loop.id));
  if (!loop.plan_id.empty()) branches.push_back(git::integration_branch(loop.plan_id));
  for (const auto& b : branches) {
    auto text = repo->read_file(b, rel, kMaxFileBytes);
    if (!text) continue;
    f.truncated = text->size() > kMaxFileBytes;
    if (f.truncated) text->resize(kMaxFileBytes);
    f.text = std::move(*text);
    return f;
  }
  f.problem = "cannot read " + rel + " (its worktree and branches do not hold it)";
  return f;
}

constexpr int kMaxForkWalk = 10'000;  // commits walked back to find where a loop's work starts

/// Whether a commit message is one loopr wrote for loop `id` ("loopr(ID): …").
bool made_for(std::string_view message, std::string_view id) {
  const std::string_view prefix = "loopr(";
  return message.starts_with(prefix) && message.substr(prefix.size()).starts_with(id) &&
         message.substr(prefix.size() + id.size()).starts_with("):");
}

/// Whether it is one loopr wrote for another loop (a commit the model made itself is neither).
bool made_for_another(std::string_view message, std::string_view id) {
  return message.starts_with("loopr(") && message.find("):") != std::string_view::npos &&
         !made_for(message, id);
}

/// Passes the API's events on with no event name, so the page's script gets every one as a
/// `message` (it only needs to know that something changed).
class UnnamedEvents final : public EventStream {
 public:
  explicit UnnamedEvents(std::shared_ptr<EventStream> out) : out_(std::move(out)) {}
  awaitable<bool> send(std::string id, std::string, std::string data) override {
    bool ok = co_await out_->send(std::move(id), std::string(), std::move(data));
    co_return ok;
  }
  awaitable<bool> comment(std::string text) override {
    bool ok = co_await out_->comment(std::move(text));
    co_return ok;
  }
  bool closed() const override { return out_->closed(); }

 private:
  std::shared_ptr<EventStream> out_;
};

}  // namespace

struct WebUi::State {
  engine::EngineContext& ctx;
  Api& api;
  net::thread_pool& reads;
  WebAccess access;
  std::string repo_name;

  State(engine::EngineContext& c, Api& a, net::thread_pool& r, WebAccess w)
      : ctx(c), api(a), reads(r), access(std::move(w)) {
    repo_name = ctx.paths.root.filename().string();
  }

  const std::string& token() const { return access.token; }

  awaitable<Response> call(std::string method, std::string path,
                           std::map<std::string, std::string> query = {}, std::string body = {}) {
    Request r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.query = std::move(query);
    r.body = std::move(body);
    Response answer = co_await api.handle(std::move(r));
    co_return answer;
  }

  web::PageFrame frame(std::string title, std::string nav, const std::vector<api::LoopRow>& loops,
                       std::int64_t since = -1) const {
    web::PageFrame f;
    f.title = std::move(title);
    f.repo = repo_name;
    f.token = token();
    f.nav = std::move(nav);
    f.since = since;
    f.waiting = web::waiting_count(loops);
    return f;
  }

  std::string error_page(const std::vector<api::LoopRow>& loops, const std::string& message) const {
    return web::page(frame("Not found", "", loops),
                     web::error_body(message, web::href("/", token())));
  }
};

WebUi::WebUi(engine::EngineContext& ctx, Api& api, net::thread_pool& reads, WebAccess access)
    : state_(std::make_shared<State>(ctx, api, reads, std::move(access))) {}
WebUi::~WebUi() = default;

const WebAccess& WebUi::access() const { return state_->access; }
void WebUi::set_port(std::uint16_t port) { state_->access.port = port; }

std::string WebUi::url() const {
  return "http://127.0.0.1:" + std::to_string(state_->access.port) +
         "/?token=" + state_->access.token;
}

Routes WebUi::routes() {
  Routes r;
  r.handle = [this](Request req) { return handle(std::move(req)); };
  r.is_stream = [this](const Request& req) { return is_stream(req); };
  r.stream = [this](Request req, std::shared_ptr<EventStream> out) {
    return stream(std::move(req), std::move(out));
  };
  r.headers = web_security_headers();
  return r;
}

bool WebUi::is_stream(const Request& req) const {
  return req.method == "GET" && req.path == "/events" && !refuse(req, state_->access);
}

awaitable<void> WebUi::stream(Request req, std::shared_ptr<EventStream> out) {
  std::shared_ptr<State> keep = state_;
  Request api_req;
  api_req.method = "GET";
  api_req.path = "/v1/events";
  // A reconnecting EventSource says where it was; else the page said what it showed.
  std::string since = req.header("last-event-id");
  if (since.empty() && req.query.count("since")) since = req.query["since"];
  api_req.query["since"] = since;
  co_await keep->api.stream(std::move(api_req), std::make_shared<UnnamedEvents>(std::move(out)));
}

awaitable<Response> WebUi::handle(Request req) {
  std::shared_ptr<State> keep = state_;
  State& s = *keep;
  if (auto refused = refuse(req, s.access)) co_return std::move(*refused);
  const auto parts = segments(req.path);
  const std::string part = req.query.count("part") ? req.query["part"] : std::string();

  if (req.method == "GET" && parts.size() == 2 && parts[0] == "static") {
    for (const EmbeddedFile& f : embedded_web_assets()) {
      if (f.name != parts[1]) continue;
      Response r;
      r.text = std::string(f.content);
      r.content_type = f.name.ends_with(".js")    ? "text/javascript; charset=utf-8"
                       : f.name.ends_with(".svg") ? "image/svg+xml"
                                                  : "text/css; charset=utf-8";
      co_return r;
    }
    co_return text_response(404, "loopr: no such file\n");
  }

  // Every page shows the gate's count in its header, so every page lists the loops; `since` is
  // read first so that no event between the two is missed by the live script.
  auto since_of = [&s] { return s.ctx.journal.store().last_event_seq(); };
  const std::uint64_t since = co_await run_blocking(s.reads, since_of);
  Response listed = co_await s.call("GET", "/v1/loops");
  if (listed.status != 200)
    co_return html_response(listed.status, s.error_page({}, web::str(listed.body, "error")));
  // The API's answers read with the CLI's decoders (loopr/api/views.hpp), not field by field.
  const std::vector<api::LoopRow> loops = api::loop_rows_from_json(listed.body);
  const std::int64_t now = now_ms();

  if (req.method == "POST") {
    if (parts.size() != 3 || parts[0] != "loop")
      co_return html_response(404, s.error_page(loops, "no such page: " + req.path));
    static const std::set<std::string> kActions = {"approve", "reject", "iterate", "answer"};
    const std::string& id = parts[1];
    const std::string& action = parts[2];
    if (!kActions.count(action) || !type_of_id(id))
      co_return html_response(404, s.error_page(loops, "no such action: " + req.path));
    auto form = parse_form(req.body).value_or(std::map<std::string, std::string>{});
    json body = json::object();
    if (action == "reject") body["reason"] = form["reason"];
    if (action == "iterate") body["feedback"] = form["feedback"];
    if (action == "answer") body["text"] = form["text"];
    Response done = co_await s.call("POST", "/v1/loops/" + id + "/" + action, {}, body.dump());
    if (done.status == 200) {
      const bool to_gate = form["back"] == "gate";
      co_return redirect(to_gate ? "/gate?token=" + s.token()
                                 : "/loop/" + web::url_encode(id) + "?token=" + s.token());
    }
    const std::string back = form["back"] == "gate"
                                 ? web::href("/gate", s.token())
                                 : web::href("/loop/" + web::url_encode(id), s.token());
    co_return html_response(done.status,
                            web::page(s.frame("Not done", "", loops),
                                      web::error_body(web::str(done.body, "error"), back)));
  }

  if (parts.empty()) {
    web::TreeView view;
    view.loops = loops;
    view.now_ms = now;
    std::vector<std::string> plans;
    for (const auto& row : loops)
      if (row.is_plan()) plans.push_back(row.id);
    if (plans.size() > kMaxPlansWithDetail)
      plans.erase(plans.begin(), plans.end() - static_cast<long>(kMaxPlansWithDetail));
    for (const auto& id : plans) {
      Response d = co_await s.call("GET", "/v1/loops/" + id);
      if (d.status == 200) view.plans[id] = api::loop_detail_from_json(d.body);
    }
    std::string section = web::tree_section(view, s.token());
    if (part == "tree") co_return html_response(200, std::move(section));
    co_return html_response(
        200, web::page(s.frame("Tree", "tree", loops, static_cast<std::int64_t>(since)),
                       "<h1>The tree</h1>" + section));
  }

  if (parts.size() == 1 && parts[0] == "gate") {
    web::GateView view;
    for (const auto& row : loops) {
      if (row.status == LoopStatus::awaiting_answer) view.questions.push_back(row);
      if (row.status != LoopStatus::awaiting_approval || !row.is_plan()) continue;
      Response d = co_await s.call("GET", "/v1/loops/" + row.id);
      if (d.status != 200) continue;
      web::GatePlan plan;
      plan.detail = api::loop_detail_from_json(d.body);
      const std::string rel =
          plan.detail.loop.artifacts.empty() ? std::string() : plan.detail.loop.artifacts.front();
      const api::LoopRow detail = plan.detail.loop;
      const RepoPaths paths = s.ctx.paths;
      auto read = [paths, detail, rel] { return read_artifact(paths, detail, rel); };
      plan.plan = co_await run_blocking(s.reads, read);
      view.plans.push_back(std::move(plan));
    }
    co_return html_response(
        200, web::page(s.frame("Gate", "gate", loops), web::gate_body(view, s.token())));
  }

  if (parts.size() >= 2 && parts[0] == "loop") {
    const std::string& id = parts[1];
    if (!type_of_id(id)) co_return html_response(404, s.error_page(loops, "no loop " + id));
    if (parts.size() == 4 && parts[2] == "iterations") {
      int n = 0;
      try {
        n = std::stoi(parts[3]);
      } catch (...) {
        n = 0;
      }
      if (n <= 0) co_return html_response(404, s.error_page(loops, "no iteration " + parts[3]));
      const RepoPaths paths = s.ctx.paths;
      auto read = [paths, id, n] {
        web::IterationFiles f;
        f.loop_id = id;
        f.n = n;
        const auto dir = paths.iteration_dir(id, n);
        f.prompt = read_shown(dir / "prompt.md", "prompt.md");
        f.conversation = read_shown(dir / "conversation.jsonl", "conversation.jsonl");
        f.validation = read_shown(dir / "validation.log", "validation.log");
        return f;
      };
      web::IterationFiles files = co_await run_blocking(s.reads, read);
      std::string body = web::iteration_body(files);
      if (part == "body") co_return html_response(200, std::move(body));
      co_return html_response(200,
                              web::page(s.frame(id + " #" + std::to_string(n), "", loops),
                                        "<h1>" + web::esc(id) + " iteration " + std::to_string(n) +
                                            "</h1><p><a href=\"" +
                                            web::href("/loop/" + web::url_encode(id), s.token()) +
                                            "\">back to the loop</a></p>" + body));
    }
    if (parts.size() != 2)
      co_return html_response(404, s.error_page(loops, "no such page: " + req.path));
    Response d = co_await s.call("GET", "/v1/loops/" + id);
    if (d.status != 200)
      co_return html_response(d.status, s.error_page(loops, web::str(d.body, "error")));
    web::LoopView view;
    view.detail = api::loop_detail_from_json(d.body);
    view.now_ms = now;
    const api::LoopRow& loop = view.detail.loop;
    std::string base = s.ctx.config->base_branch;
    for (const auto& row : loops) {
      if (row.parent_id == id) view.children.push_back(row);
      if (row.id == loop.plan_id && !row.base_branch.empty()) base = row.base_branch;
    }
    if (part == "summary") co_return html_response(200, web::loop_summary_section(view, s.token()));
    if (loop.is_plan() && loop.pr && loop.pr->number > 0) {  // merge: pr: new review comments
      Response c = co_await s.call("GET", "/v1/plans/" + id + "/pr/comments");
      if (c.status == 200)
        view.pr_comments = c.body.value("comments", nlohmann::json::array());
      else
        view.pr_comments_problem = web::str(c.body, "error");
    }
    // A plan's diff is its integration branch (the whole tree's change) once that holds
    // anything; before (at the gate) it is the plan's own branch: the plan it wrote.
    const bool is_plan = loop.is_plan();
    const std::string own = loop.branch;
    const RepoPaths paths = s.ctx.paths;
    const api::LoopRow detail = loop;
    struct Read {
      std::vector<web::ShownFile> artifacts;
      web::ShownFile diff;
      std::string label;
    };
    auto read = [paths, detail, base, own, is_plan, id] {
      Read out;
      for (const auto& a : detail.artifacts)
        out.artifacts.push_back(read_artifact(paths, detail, a));
      std::vector<std::string> branches;
      if (is_plan) branches.push_back(git::integration_branch(id));
      if (!own.empty()) branches.push_back(own);
      branches.push_back(git::archive_branch(id));
      out.label = "git diff " + base + "..." + branches.front();
      out.diff.path = branches.front();
      auto repo = git::Repository::open(paths.root);
      if (!repo) {
        out.diff.problem = repo.error().message;
        return out;
      }
      // Where the loop's own work starts: a plan's own branch starts where the base was when
      // it began, so its tree's change is everything on its integration branch since; a loop
      // of the tree starts from its integration branch, so its work is what its branch added
      // since the last commit loopr made for another loop. Once merged, `base...branch` is
      // empty: the fork point still shows the work. Unknown: the fork from the base.
      std::optional<std::string> fork;
      for (const auto& b : is_plan ? std::vector<std::string>{own, git::archive_branch(id)}
                                   : std::vector<std::string>{}) {
        if (b.empty()) continue;
        auto found = repo->first_parent_where(
            b, [&id](std::string_view m) { return !made_for(m, id); }, kMaxForkWalk);
        if (found && *found) {
          fork = *found;
          break;
        }
      }
      git::DiffLimits limits;
      limits.max_lines = 50'000;
      limits.max_bytes = kMaxFileBytes;
      std::string problem;
      for (const auto& branch : branches) {
        std::optional<std::string> from = fork;
        if (!is_plan) {
          auto found = repo->first_parent_where(
              branch, [&id](std::string_view m) { return made_for_another(m, id); }, kMaxForkWalk);
          if (found && *found) from = *found;
        }
        const std::string from_rev = from.value_or(base);
        auto diff = repo->diff_since_fork(from_rev, branch, limits);
        if (!diff) {
          if (problem.empty()) problem = "no diff: " + diff.error().message;
          continue;
        }
        // The first branch that has a diff names the section; a later one replaces it only
        // when it holds a change the earlier ones did not show.
        if (out.diff.text && diff->empty()) continue;
        out.label = "git diff " + (from ? from->substr(0, 12) : base) + "..." + branch;
        out.diff.path = branch;
        out.diff.text = std::move(*diff);
        if (!out.diff.text->empty()) break;
      }
      if (!out.diff.text) out.diff.problem = problem;
      return out;
    };
    Read files = co_await run_blocking(s.reads, read);
    view.diff_label = std::move(files.label);
    view.artifacts = std::move(files.artifacts);
    view.diff = std::move(files.diff);
    co_return html_response(200, web::page(s.frame(std::string(to_string(loop.type)) + " " + id, "",
                                                   loops, static_cast<std::int64_t>(since)),
                                           web::loop_body(view, s.token())));
  }

  co_return html_response(404, s.error_page(loops, "no such page: " + req.path));
}

}  // namespace loopr::daemon
