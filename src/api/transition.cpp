#include <loopr/api/events.hpp>
#include <loopr/api/transition.hpp>

namespace loopr::api {

Result<void> transition(Loop& loop, LoopStatus to, EndReason end, std::string reason,
                        std::vector<Event>& out) {
  const LoopStatus from = loop.status;
  LOOPR_TRY(loop.transition_to(to, reason, end));
  out.push_back(encode(loop.id, StatusChanged{from, to, std::move(reason), loop.end_reason}));
  return ok();
}

}  // namespace loopr::api
