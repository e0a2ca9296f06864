// What the CLI shows of coordination: a loop's question (in `review`, `show`, `watch` and
// `submit --wait`), `loopr answer`, and a plan's forecast at the gate (and against the actual
// spending once its tree ended).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <loopr/api/views.hpp>

#include "cli/review.hpp"

namespace loopr::cli {

/// Lines under a tree for its loops that wait for an answer: the question and how to answer.
std::vector<std::string> question_lines(const std::vector<api::LoopRow>& loops, const Style& style);

/// `loopr show`'s forecast (and forecast against actual) lines for a plan's detail; "" if none.
std::string render_forecast(const api::LoopDetail& detail, const Style& style);

/// `loopr review` for a loop that asked: shows the question, asks `[a]nswer [s]kip`, reads the
/// answer (ended by an empty line) and sends it. decision: answer | skip.
ReviewDecision review_question(const DaemonClient& api, const api::LoopRow& loop,
                               Prompter& prompter, std::ostream& ui, const Style& style);

}  // namespace loopr::cli
