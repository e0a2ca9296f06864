// The web UI (`loopr web`, docs/guide.md "The web UI"), a client of the control API served by the
// daemon on 127.0.0.1: src/web/. The daemon makes it through DaemonOptions::web.
#pragma once

#include <memory>

#include <loopr/daemon/front_end.hpp>

namespace loopr::web {

/// A web UI with a fresh token (src/web/ui.hpp), for DaemonOptions::web.
std::unique_ptr<daemon::FrontEnd> make_web_ui(const daemon::FrontEndDeps& deps);

}  // namespace loopr::web
