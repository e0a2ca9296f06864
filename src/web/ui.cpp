// The web UI's routes (ui.hpp). Thin: check access, ask the control API (its routes' handle, the
// same calls as the CLI), read files on the pool, render with pages.hpp, answer.
#include "web/ui.hpp"

#include <spdlog/spdlog.h>

#include <variant>

#include <loopr/api/answers.hpp>
#include <loopr/api/comments.hpp>
#include <loopr/api/files.hpp>
#include <loopr/api/requests.hpp>
#include <loopr/api/views.hpp>
#include <loopr/core/embedded.hpp>
#include <loopr/core/ids.hpp>
#include <loopr/daemon/http_common.hpp>
#include <loopr/web/web_ui.hpp>

#include "web/html.hpp"
#include "web/pages.hpp"

namespace loopr::web {

using daemon::match_path;
using daemon::parse_form;
using daemon::path_patterns;
using daemon::path_segments;

const std::vector<EmbeddedFile>& embedded_web_assets();

namespace {

using nlohmann::json;

constexpr std::size_t kMaxPlansWithDetail = 20;  // plans whose forecast the tree page shows

Response html_response(int status, std::string html) {
  Response r = text_response(status, std::move(html));
  r.content_type = "text/html; charset=utf-8";
  return r;
}

Response redirect(const std::string& location) {
  Response r = text_response(303, std::string());
  r.headers.emplace_back("Location", location);
  return r;
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
  Routes api;  ///< the control API's
  net::thread_pool& reads;
  WebAccess access;
  std::string repo_name;

  State(engine::EngineContext& c, Routes a, net::thread_pool& r, WebAccess w)
      : ctx(c), api(std::move(a)), reads(r), access(std::move(w)) {
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
    f.waits = web::waiting_summary(loops);
    return f;
  }

  std::string error_page(const std::vector<api::LoopRow>& loops, const std::string& message) const {
    return web::page(frame("Not found", "", loops),
                     web::error_body(message, web::href("/", token())));
  }
};

WebUi::WebUi(engine::EngineContext& ctx, Routes api, net::thread_pool& reads, WebAccess access)
    : state_(std::make_shared<State>(ctx, std::move(api), reads, std::move(access))) {}
WebUi::~WebUi() = default;

const WebAccess& WebUi::access() const { return state_->access; }
void WebUi::set_port(std::uint16_t port) { state_->access.port = port; }
std::uint16_t WebUi::port() const { return state_->access.port; }

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

namespace {

/// What a page is given: the daemon's state, the request, its path's `{name}`s, every loop row
/// (each page's header counts what waits) and the last event seq read before them.
struct PageCall {
  WebUi::State& s;
  Request& req;
  const std::map<std::string, std::string>& p;
  const std::vector<api::LoopRow>& loops;
  std::uint64_t since = 0;
  std::string part() const { return req.query.count("part") ? req.query.at("part") : ""; }
};

awaitable<Response> tree_page(PageCall& c);
awaitable<Response> gate_page(PageCall& c);
awaitable<Response> loop_page(PageCall& c);
awaitable<Response> iteration_page(PageCall& c);
awaitable<Response> file_page(PageCall& c);
awaitable<Response> action_post(PageCall& c);

/// One page: method, path (`{name}` matches one segment, as in the control API's kRoutes) and
/// what renders it.
struct Page {
  std::string_view method;
  std::string_view path;
  awaitable<Response> (*render)(PageCall&);
};

// Every page of the web UI (docs/guide.md "The web UI"); /static/ and /events are served before these.
const Page kPages[] = {
    {"GET", "/", tree_page},
    {"GET", "/gate", gate_page},
    {"GET", "/loop/{id}", loop_page},
    {"GET", "/loop/{id}/iterations/{n}", iteration_page},
    {"GET", "/loop/{id}/file", file_page},
    {"POST", "/loop/{id}/{action}", action_post},
};

}  // namespace

awaitable<Response> WebUi::handle(Request req) {
  std::shared_ptr<State> keep = state_;
  State& s = *keep;
  if (auto refused = refuse(req, s.access)) co_return std::move(*refused);
  const auto parts = path_segments(req.path);

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
    co_return html_response(listed.status,
                            s.error_page({}, api::error_from_json(listed.body).error));
  // The API's answers read with the CLI's decoders (loopr/api/views.hpp), not field by field.
  const std::vector<api::LoopRow> loops = api::loop_rows_from_json(listed.body);

  static const std::vector<std::vector<std::string>> patterns = path_patterns(kPages);
  for (std::size_t i = 0; i < std::size(kPages); ++i) {
    if (kPages[i].method != req.method) continue;
    auto params = match_path(patterns[i], parts);
    if (!params) continue;
    if (params->count("id") && !type_of_id(params->at("id")))
      co_return html_response(404, s.error_page(loops, "no loop " + params->at("id")));
    PageCall call{s, req, *params, loops, since};
    co_return co_await kPages[i].render(call);
  }
  co_return html_response(404, s.error_page(loops, "no such page: " + req.path));
}

namespace {

std::string loop_href(const std::string& id, const std::string& token) {
  return web::href("/loop/" + web::url_encode(id), token);
}

awaitable<Response> tree_page(PageCall& c) {
  web::TreeView view;
  view.loops = c.loops;
  view.now_ms = now_ms();
  std::vector<std::string> plans;
  for (const auto& row : c.loops)
    if (row.is_plan()) plans.push_back(row.id);
  if (plans.size() > kMaxPlansWithDetail)
    plans.erase(plans.begin(), plans.end() - static_cast<long>(kMaxPlansWithDetail));
  for (const auto& id : plans) {
    Response d = co_await c.s.call("GET", "/v1/loops/" + id);
    if (d.status == 200) view.plans[id] = api::loop_detail_from_json(d.body);
  }
  std::string section = web::tree_section(view, c.s.token());
  if (c.part() == "tree") co_return html_response(200, std::move(section));
  co_return html_response(
      200, web::page(c.s.frame("Tree", "tree", c.loops, static_cast<std::int64_t>(c.since)),
                     "<h1>The tree</h1>" + section));
}

/// One of loop `id`'s artifacts as the API reads it (`GET /v1/loops/{id}/artifact`), or why not.
awaitable<web::ShownFile> artifact_of(PageCall& c, const std::string& id, const std::string& rel) {
  std::map<std::string, std::string> query;  // (not a braced list: GCC 12's coroutines)
  query["path"] = rel;
  Response got = co_await c.s.call("GET", "/v1/loops/" + id + "/artifact", std::move(query));
  if (got.status == 200) co_return api::file_view_from_json(got.body);
  web::ShownFile f;
  f.path = rel;
  f.problem = api::error_from_json(got.body).error;
  co_return f;
}

/// An iteration's files from the API's answer, in the order the page shows them.
web::IterationFiles iteration_files_of(const api::IterationView& view) {
  web::IterationFiles files;
  files.loop_id = view.id;
  files.n = view.n;
  for (const auto& spec : kIterationFiles) {
    IterationFileText& f = files[spec.file];
    f.problem = std::string("(no ") + spec.name + ")";
    for (const auto& got : view.files)
      if (got.name == spec.name) f = {got.text, got.truncated, got.problem};
  }
  return files;
}

awaitable<Response> gate_page(PageCall& c) {
  web::GateView view;
  for (const auto& row : c.loops) {
    if (row.status == LoopStatus::awaiting_answer) view.questions.push_back(row);
    if (row.status != LoopStatus::awaiting_approval || !row.is_plan()) continue;
    Response d = co_await c.s.call("GET", "/v1/loops/" + row.id);
    if (d.status != 200) continue;
    web::GatePlan plan;
    plan.detail = api::loop_detail_from_json(d.body);
    const std::string rel =
        plan.detail.loop.artifacts.empty() ? std::string() : plan.detail.loop.artifacts.front();
    plan.plan = co_await artifact_of(c, row.id, rel);
    view.plans.push_back(std::move(plan));
  }
  co_return html_response(
      200, web::page(c.s.frame("Gate", "gate", c.loops), web::gate_body(view, c.s.token())));
}

awaitable<Response> iteration_page(PageCall& c) {
  const std::string& id = c.p.at("id");
  int n = 0;
  try {
    n = std::stoi(c.p.at("n"));
  } catch (...) {
    n = 0;
  }
  if (n <= 0) co_return html_response(404, c.s.error_page(c.loops, "no iteration " + c.p.at("n")));
  Response got = co_await c.s.call("GET", "/v1/loops/" + id + "/iterations/" + std::to_string(n));
  if (got.status != 200)
    co_return html_response(got.status,
                            c.s.error_page(c.loops, api::error_from_json(got.body).error));
  std::string body =
      web::iteration_body(iteration_files_of(api::iteration_view_from_json(got.body)));
  if (c.part() == "body") co_return html_response(200, std::move(body));
  co_return html_response(200, web::page(c.s.frame(id + " #" + std::to_string(n), "", c.loops),
                                         "<h1>" + web::esc(id) + " iteration " + std::to_string(n) +
                                             "</h1><p><a href=\"" + loop_href(id, c.s.token()) +
                                             "\">back to the loop</a></p>" + body));
}

/// The loop's detail from the API, or the error page it becomes.
awaitable<std::variant<api::LoopDetail, Response>> detail_of(PageCall& c, const std::string& id) {
  Response d = co_await c.s.call("GET", "/v1/loops/" + id);
  if (d.status != 200)
    co_return html_response(d.status,
                            c.s.error_page(c.loops, api::error_from_json(d.body).error));
  co_return api::loop_detail_from_json(d.body);
}

awaitable<Response> file_page(PageCall& c) {
  const std::string& id = c.p.at("id");
  const std::string rel = c.req.query.count("path") ? c.req.query.at("path") : "";
  std::map<std::string, std::string> query;
  query["path"] = rel;
  Response got = co_await c.s.call("GET", "/v1/loops/" + id + "/file", std::move(query));
  if (got.status != 200)
    co_return html_response(got.status,
                            c.s.error_page(c.loops, api::error_from_json(got.body).error));
  const web::ShownFile f = api::file_view_from_json(got.body);
  co_return html_response(f.text ? 200 : 404, web::page(c.s.frame(rel + " in " + id, "", c.loops),
                                                        web::file_body(id, f, c.s.token())));
}

awaitable<Response> loop_page(PageCall& c) {
  const std::string& id = c.p.at("id");
  auto got = co_await detail_of(c, id);
  if (auto* r = std::get_if<Response>(&got)) co_return std::move(*r);
  web::LoopView view;
  view.detail = std::move(std::get<api::LoopDetail>(got));
  view.now_ms = now_ms();
  const api::LoopRow& loop = view.detail.loop;
  std::string base = c.s.ctx.config->base_branch;
  for (const auto& row : c.loops) {
    if (row.parent_id == id) view.children.push_back(row);
    if (row.id == loop.plan_id && !row.base_branch.empty()) base = row.base_branch;
  }
  const std::string& token = c.s.token();
  if (c.part() == "summary") co_return html_response(200, web::loop_summary_section(view, token));
  Response comments = co_await c.s.call("GET", "/v1/loops/" + id + "/comments");
  if (comments.status == 200) view.comments = api::comments_from_json(comments.body).comments;
  if (loop.is_plan() && loop.pr && loop.pr->number > 0) {  // merge: pr: new review comments
    Response pr = co_await c.s.call("GET", "/v1/plans/" + id + "/pr/comments");
    if (pr.status == 200)
      view.pr_comments = api::pr_comments_from_json(pr.body).comments;
    else
      view.pr_comments_problem = api::error_from_json(pr.body).error;
  }
  for (const auto& a : loop.artifacts) view.artifacts.push_back(co_await artifact_of(c, id, a));
  Response diff = co_await c.s.call("GET", "/v1/loops/" + id + "/diff");
  api::DiffView d = diff.status == 200 ? api::diff_view_from_json(diff.body) : api::DiffView{};
  if (diff.status != 200) d.diff.problem = api::error_from_json(diff.body).error;
  view.diff_label = std::move(d.label);
  view.diff = std::move(d.diff);
  co_return html_response(200, web::page(c.s.frame(std::string(to_string(loop.type)) + " " + id, "",
                                                   c.loops, static_cast<std::int64_t>(c.since)),
                                         web::loop_body(view, token)));
}

/// The API call a page's form makes: method, path and JSON body (the CLI's own calls).
struct ApiCall {
  std::string path;
  json body = json::object();
};

/// What the browser posts with an action (application/x-www-form-urlencoded), read once: each
/// action takes the fields it needs. A field left out is empty; a line that is not a number is 0.
struct ActionForm {
  std::string reason, text, feedback, file, side, line, back, confirmed;
};

ActionForm action_form_of(const std::string& body) {
  const auto form = parse_form(body).value_or(std::map<std::string, std::string>{});
  const auto field = [&form](const char* name) {
    auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  return ActionForm{field("reason"), field("text"), field("feedback"), field("file"),
                    field("side"),   field("line"), field("back"),     field("confirmed")};
}

api::CommentRequest comment_of(const ActionForm& f) {
  api::CommentRequest c{f.file, 0, api::parse_diff_side(f.side).value_or(api::DiffSide::new_file),
                        f.text};
  try {
    c.line = std::stoi(f.line);
  } catch (...) {
    c.line = 0;
  }
  return c;
}

/// One action of the loop page: its API call, and whether the page asks before making it (stop
/// and merge cannot be taken back). Each call is the one the CLI makes for the same command
/// (`loopr pause ID` is `POST /v1/loops/ID/pause` …); a comment is `POST /v1/loops/ID/comments`,
/// and sending the comments is ONE `iterate` with `comments`.
struct WebAction {
  std::string_view name;
  ApiCall (*call)(const std::string& id, const ActionForm& f);
  bool confirm = false;
  bool to_comments = false;  ///< done: back to the page's comments (#comments)
};

std::string loop_path(const std::string& id) { return "/v1/loops/" + id; }

const WebAction kActions[] = {
    {"approve",
     [](const std::string& id, const ActionForm&) { return ApiCall{loop_path(id) + "/approve"}; }},
    {"pause",
     [](const std::string& id, const ActionForm&) { return ApiCall{loop_path(id) + "/pause"}; }},
    {"resume",
     [](const std::string& id, const ActionForm&) { return ApiCall{loop_path(id) + "/resume"}; }},
    {"stop",
     [](const std::string& id, const ActionForm&) { return ApiCall{loop_path(id) + "/stop"}; },
     true},
    {"reject",
     [](const std::string& id, const ActionForm& f) {
       return ApiCall{loop_path(id) + "/reject", api::to_json(api::RejectRequest{f.reason})};
     }},
    {"answer",
     [](const std::string& id, const ActionForm& f) {
       return ApiCall{loop_path(id) + "/answer", api::to_json(api::AnswerRequest{f.text})};
     }},
    {"iterate",
     [](const std::string& id, const ActionForm& f) {
       return ApiCall{loop_path(id) + "/iterate",
                      api::to_json(api::IterateRequest{f.feedback, false, false})};
     }},
    {"send-comments",
     [](const std::string& id, const ActionForm& f) {
       return ApiCall{loop_path(id) + "/iterate",
                      api::to_json(api::IterateRequest{f.feedback, true, false})};
     },
     false, true},
    {"from-pr",  // `loopr iterate PLAN --from-pr`
     [](const std::string& id, const ActionForm&) {
       return ApiCall{loop_path(id) + "/iterate",
                      api::to_json(api::IterateRequest{"", false, true})};
     }},
    {"merge",
     [](const std::string& id, const ActionForm&) { return ApiCall{"/v1/plans/" + id + "/merge"}; },
     true},
    {"comment",
     [](const std::string& id, const ActionForm& f) {
       return ApiCall{loop_path(id) + "/comments", api::to_json(comment_of(f))};
     },
     false, true},
};

const WebAction* web_action(std::string_view name) {
  for (const WebAction& a : kActions)
    if (a.name == name) return &a;
  return nullptr;
}

awaitable<Response> action_post(PageCall& c) {
  const std::string& id = c.p.at("id");
  const std::string& name = c.p.at("action");
  const std::string& token = c.s.token();
  const WebAction* action = web_action(name);
  if (action == nullptr)
    co_return html_response(404, c.s.error_page(c.loops, "no such action: " + name));
  const ActionForm form = action_form_of(c.req.body);
  const ApiCall call = action->call(id, form);
  const bool to_gate = form.back == "gate";
  const std::string back_path = to_gate ? "/gate" : "/loop/" + web::url_encode(id);
  if (action->confirm && form.confirmed != "yes") {
    bool pull_request = false;
    for (const auto& row : c.loops)
      if (row.id == id) pull_request = row.pr.has_value();
    co_return html_response(
        200,
        web::page(c.s.frame("Confirm", "", c.loops),
                  web::confirm_body(id, name, token, web::href(back_path, token), pull_request)));
  }
  Response done = co_await c.s.call("POST", call.path, {}, call.body.dump());
  if (done.status == 200 || done.status == 201) {
    co_return redirect(back_path + "?token=" + token + (action->to_comments ? "#comments" : ""));
  }
  co_return html_response(done.status,
                          web::page(c.s.frame("Not done", "", c.loops),
                                    web::error_body(api::error_from_json(done.body).error,
                                                    web::href(back_path, token))));
}

}  // namespace

std::unique_ptr<FrontEnd> make_web_ui(const daemon::FrontEndDeps& deps) {
  return std::make_unique<WebUi>(deps.ctx, deps.api, deps.reads,
                                 WebAccess{new_web_token(), 0});
}

}  // namespace loopr::web
