// Percent-encoding of one URL component (RFC 3986 unreserved characters kept): for the control
// API's paths (CLI), the web page's links and the forge's REST paths and queries.
#pragma once

#include <string>
#include <string_view>

namespace loopr {

std::string url_encode(std::string_view text);

}  // namespace loopr
