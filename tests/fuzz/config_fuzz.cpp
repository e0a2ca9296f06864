// Fuzzes the config loader: any text is either a Config or an error that names the file (and,
// for YAML problems, a line); it never throws, crashes or hangs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <loopr/core/config.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = loopr::parse_config(text, "fuzz.yml");
  if (!config.ok() && config.error().message.rfind("fuzz.yml", 0) != 0) __builtin_trap();
  return 0;
}
