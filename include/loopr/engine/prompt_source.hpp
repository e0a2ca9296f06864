// Where the engine gets its prompts: a template per loop type (and `judge`) rendered with the
// iteration's variables. The markdown module's template library implements it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <loopr/core/result.hpp>

namespace loopr::engine {

class PromptSource {
 public:
  virtual ~PromptSource() = default;
  /// Renders template `name` (plan, spec, phase, code, judge) with `vars` ({{name}} → value).
  virtual Result<std::string> render(const std::string& name,
                                     const std::map<std::string, std::string>& vars) const = 0;

  /// The same text in two parts for prompt caching: `fixed`, the sections whose variables are
  /// all `stable` (the system block every iteration and loop of a type shares), and `rest` (the
  /// iteration's opening message). The default puts it all in `rest`.
  struct Parts {
    std::string fixed;
    std::string rest;
  };
  virtual Result<Parts> render_parts(const std::string& name,
                                     const std::map<std::string, std::string>& vars,
                                     const std::vector<std::string>& stable) const {
    (void)stable;
    auto whole = render(name, vars);
    if (!whole) return whole.take_error();
    return Parts{{}, std::move(*whole)};
  }
};

}  // namespace loopr::engine
