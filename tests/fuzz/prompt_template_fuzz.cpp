// Fuzzes the prompt template parser and renderer: arbitrary text either fails to load with a
// message naming a line, or renders; rendering with every variable set never fails, and a
// template with no variables renders to its own text with `\{{` unescaped.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <loopr/markdown/prompt_template.hpp>

using namespace loopr;
using namespace loopr::markdown;

namespace {

void require(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto t = PromptTemplate::parse(text, "fuzz.md");
  if (!t.ok()) {
    require(t.error().message.rfind("fuzz.md:", 0) == 0);
    return 0;
  }
  PromptValues values;
  for (std::string_view name : prompt_variable_names()) values[std::string(name)] = "{{task}}";
  auto out = t->render(values);
  require(out.ok());
  if (t->variables().empty()) {
    std::string unescaped;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 3, "\\{{") == 0) {
        unescaped += "{{";
        i += 2;
      } else {
        unescaped += text[i];
      }
    }
    require(*out == unescaped);
  }
  return 0;
}
