#pragma once
#include <string_view>

namespace loopr {

/// A named moment where a crash is most likely to lose or double work (git has moved, the store
/// does not know yet). The fault suite sets `LOOPR_CRASH_AT=<name>` (or `<name>#N`: its Nth pass)
/// in the daemon's environment, and the process kills itself there with SIGKILL, as `kill -9` or
/// a power cut would, so a test can prove that a restart always finishes the work. Unset (as for
/// every user), it is one relaxed atomic load.
void crash_point(std::string_view name);

}  // namespace loopr
