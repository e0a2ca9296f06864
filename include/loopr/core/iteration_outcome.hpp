// What one iteration came to: the `status` of its record (src/daemon/API.md), typed where the
// engine decides it (iteration_rules) and written as text once, by the codecs.
#pragma once

#include <string_view>

namespace loopr {

/// passed | failed | asked (it asked the person a question) | stopped | error. `other`: a text
/// this version does not know (a record or an answer of a newer loopr), never made here.
enum class IterationOutcome { passed, failed, asked, stopped, error, other };

const char* to_string(IterationOutcome outcome);
/// The outcome a text names; `other` for any other text.
IterationOutcome parse_iteration_outcome(std::string_view text);

}  // namespace loopr
