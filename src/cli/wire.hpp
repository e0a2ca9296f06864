// The CLI's one decoder of the daemon's answers: every API document the CLI shows or waits on
// is read here into the typed views and events of include/loopr/api/ (no name-based JSON reads
// anywhere else in src/cli). Calls that fail are CommandErrors, as the client's.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <loopr/api/answers.hpp>
#include <loopr/api/events.hpp>
#include <loopr/api/maintenance.hpp>
#include <loopr/api/requests.hpp>
#include <loopr/api/views.hpp>

#include "cli/daemon_client.hpp"

namespace loopr::cli {

/// `GET /v1/loops` with `query` (e.g. `?all=true`, `?plan=001`): the rows in tree order.
std::vector<api::LoopRow> list_loops(const DaemonClient& api, const std::string& query = {});
/// `GET /v1/loops/{id}`.
api::LoopDetail show_loop(const DaemonClient& api, const std::string& id);
/// `POST /v1/loops/{id}/{action}` with `body`: the loop after the action.
api::LoopRow act_on(const DaemonClient& api, const std::string& id, const std::string& action,
                    const nlohmann::json& body = nullptr);
/// `POST /v1/plans`: the new plan's id (a CommandError when the answer has none).
std::string submit_request(const DaemonClient& api, const api::PlanRequest& request);
/// `POST /v1/plans/{id}/merge`'s answer: the document as it came (for `--json`) and what the
/// CLI says of it.
struct MergeAnswer {
  nlohmann::json document;
  api::MergeView view;
};
/// `POST /v1/plans/{id}/merge` (`force`: `?force=1`); it may run the test command first, so it
/// waits as long as a code iteration may.
MergeAnswer merge_plan(const DaemonClient& api, const std::string& plan_id, bool force);

/// `GET /v1/plans/{id}/pr/comments` (merge: pr): the review comments since the last push.
api::PrCommentsView pr_comments(const DaemonClient& api, const std::string& plan_id);

/// `POST /v1/web {port}`: the web UI's address (`started`: it was not running before).
api::WebStarted start_web(const DaemonClient& api, int port);
/// `POST /v1/web/stop`: false when it was not running.
bool stop_web(const DaemonClient& api);

/// One message of `GET /v1/events`; nullopt when its data is not an event.
std::optional<api::TypedEvent> event_of(const StreamMessage& message);
/// The same from an event's JSON (`{"seq","time","loop_id","type","data"}`).
std::optional<api::TypedEvent> event_of(const nlohmann::json& event);

}  // namespace loopr::cli
