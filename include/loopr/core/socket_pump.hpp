// Carrying bytes between two connected sockets, both ways, until both sides are done: the
// claude CLI's network path (its sandbox's bridge to the daemon's allowlisting proxy, and the
// proxy to the API host). Blocking; one call per connection, on a thread of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

namespace loopr {

/// Copies `a` → `b` and `b` → `a` (with `a_first` sent to `b` before anything else) until both
/// directions reached end of file (each end is passed on as a write shutdown), an error, `stop`,
/// or `idle` without a byte either way. Closes neither descriptor.
void pump_both_ways(int a, int b, std::string_view a_first = {},
                    const std::atomic<bool>* stop = nullptr,
                    std::chrono::milliseconds idle = std::chrono::minutes(30));

/// Writes all of `data` to `fd` (blocking); false on an error.
bool write_all(int fd, std::string_view data);

/// Reads from `fd` until `data` holds "\r\n\r\n" (an HTTP head) or `max` bytes; what came after
/// the head stays in `data` too. False on end of file, an error or a head too long.
bool read_http_head(int fd, std::string& data, std::size_t max = 16 * 1024);

}  // namespace loopr
