// Fuzzes the Claude Code stream-json reader: arbitrary lines (JSON or not) are read and the
// outcome is built without crashing; a process that "succeeded" with garbage output is an error
// outcome, never a response made from nothing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "llm/stream_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  loopr::llm::StreamJsonReader reader;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    reader.on_line(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  loopr::ProcessResult process;
  process.exit_code = 0;
  loopr::llm::Pricing pricing({});
  auto outcome = reader.finish(process, pricing);
  (void)outcome;
  return 0;
}
