#include <cerrno>
#include <cstring>
#include <mock_llm/request_log.hpp>
#include <stdexcept>

namespace loopr::mock_llm {

RequestLog::RequestLog(const std::string& path) : file_(std::fopen(path.c_str(), "a")) {
  if (!file_)
    throw std::runtime_error("cannot open the request log " + path + ": " + std::strerror(errno));
}

void RequestLog::append(const nlohmann::json& line) {
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  // One fwrite per line, then a flush: a reader never sees half a line from us.
  std::fwrite(text.data(), 1, text.size(), file_.get());
  std::fflush(file_.get());
}

}  // namespace loopr::mock_llm
