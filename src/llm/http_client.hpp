// The HTTP client is public (include/loopr/llm/http_client.hpp): the forge client uses it too.
#pragma once

#include <loopr/llm/http_client.hpp>
