// Where the engine gets its prompts: a template per loop type (and `judge`) rendered with the
// iteration's variables. The markdown module's template library implements it.
#pragma once

#include <map>
#include <string>

#include <loopr/core/result.hpp>

namespace loopr::engine {

class PromptSource {
 public:
  virtual ~PromptSource() = default;
  /// Renders template `name` (plan, spec, phase, code, judge) with `vars` ({{name}} → value).
  virtual Result<std::string> render(const std::string& name,
                                     const std::map<std::string, std::string>& vars) const = 0;
};

}  // namespace loopr::engine
