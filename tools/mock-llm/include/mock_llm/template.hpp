// `{{name}}` substitution in scripted replies: regex captures (`{{user.1}}`, `{{user.path}}`),
// `{{loop_id}}`, `{{loop_type}}`, `{{n}}`, `{{turn}}`, `{{model}}`, `{{api}}`.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace loopr::mock_llm {

using TemplateVars = std::map<std::string, std::string, std::less<>>;

/// The variable names used in `text` (`{{ user.1 }}` → "user.1"), in order of appearance.
std::vector<std::string> template_variables(std::string_view text);

/// Replaces every `{{name}}` by its value; names without a value are left as written (the
/// script loader rejects unknown names, so this only happens for optional captures).
std::string render_template(std::string_view text, const TemplateVars& vars);

/// Renders every string inside `value` (object keys stay as they are).
nlohmann::json render_json_templates(const nlohmann::json& value, const TemplateVars& vars);

}  // namespace loopr::mock_llm
