#include <loopr/core/result.hpp>

namespace loopr {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::already_exists: return "already_exists";
    case ErrorCode::conflict: return "conflict";
    case ErrorCode::illegal_transition: return "illegal_transition";
    case ErrorCode::io: return "io";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::cancelled: return "cancelled";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

}  // namespace loopr
