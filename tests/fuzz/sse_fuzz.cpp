// Fuzzes the server-sent-events parser: the same bytes fed whole or in arbitrary chunks give the
// same events (the first byte picks the chunk size).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <loopr/core/sse.hpp>

using loopr::SseEvent;
using loopr::SseParser;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::size_t chunk = 1 + data[0] % 17;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<SseEvent> whole, pieces;
  SseParser a([&](const SseEvent& e) { whole.push_back(e); });
  a.feed(text);
  SseParser b([&](const SseEvent& e) { pieces.push_back(e); });
  for (std::size_t i = 0; i < text.size(); i += chunk) b.feed(text.substr(i, chunk));
  if (whole.size() != pieces.size() || a.has_partial_event() != b.has_partial_event())
    __builtin_trap();
  for (std::size_t i = 0; i < whole.size(); ++i)
    if (whole[i].event != pieces[i].event || whole[i].data != pieces[i].data ||
        whole[i].id != pieces[i].id)
      __builtin_trap();
  return 0;
}
