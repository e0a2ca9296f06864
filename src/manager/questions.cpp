// A loop's question to the person (`ask_user`): `loopr answer` stores the answer and the loop
// runs again with it in its next prompt. A waiting loop has no run (it holds no loop or model
// slot); its question and the answer are in its run marks, so both survive a restart.
#include <loopr/api/events.hpp>
#include <loopr/engine/feedback.hpp>

#include "manager/driver.hpp"
#include "manager/tree_rules.hpp"

namespace loopr::manager {

using engine::transition;

awaitable<ActionResult> answer(State s, std::string id, std::string text) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    co_return make_error(ErrorCode::invalid_argument,
                         "the answer is empty (write what to tell the loop)");
  text = text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
  if (s->stopping)
    co_return make_error(ErrorCode::unsupported, "the daemon is shutting down (start it again)");
  bool run = false;
  auto stored = co_await s->journal.edit(id, [&](Loop& l, WriteSet& w) -> std::optional<Error> {
    run = false;
    if (l.run.question.empty() ||
        (l.status != LoopStatus::awaiting_answer && l.status != LoopStatus::paused))
      return not_allowed(l, "it has no question waiting for an answer");
    if (!l.run.answer.empty() && l.status == LoopStatus::paused)
      return not_allowed(l,
                         "its question is answered already (`loopr resume " + l.id + "` runs it)");
    l.run.answer = text;
    w.events.push_back(
        api::encode(l.id, api::QuestionAnswered{l.run.question, engine::first_line(text, 400)}));
    if (l.status == LoopStatus::paused) return std::nullopt;  // it runs when resumed
    // Under a paused ancestor it waits for that resume; otherwise it runs at once.
    bool paused = s->under_paused_root(l.id);
    if (!transition(l, paused ? LoopStatus::paused : LoopStatus::pending,
                    paused ? EndReason::paused_by_user : EndReason::none,
                    paused ? "answered; paused by the user (its ancestor is paused)"
                           : "answered by the user",
                    w.events))
      return not_allowed(l, "it cannot take an answer now");
    run = !paused;
    return std::nullopt;
  });
  if (stored && run) spawn_run(s, id);
  co_return stored;
}

}  // namespace loopr::manager
