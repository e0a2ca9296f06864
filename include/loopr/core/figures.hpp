// How figures read to a person: a cost, an age, an elapsed time, a count. One spelling for the
// CLI's tables and the web pages.
#pragma once

#include <cstdint>
#include <string>

namespace loopr {

/// `$0.00`; below a cent `$0.004`; zero `$0`.
std::string format_cost(double usd);
/// A compact age or duration: `42s`, `5m`, `3h`, `2d` (`0s` for negatives).
std::string format_age(std::int64_t ms);
/// An elapsed time with seconds: `7s`, `1m05s`, `2h03m`.
std::string format_elapsed(std::int64_t ms);
/// `12,345`.
std::string format_count(std::int64_t n);

}  // namespace loopr
