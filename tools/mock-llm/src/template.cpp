#include <cctype>
#include <mock_llm/template.hpp>

namespace loopr::mock_llm {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// Calls `on_text(literal)` and `on_var(name, raw)` for the pieces of `text` in order.
template <typename OnText, typename OnVar>
void scan(std::string_view text, OnText on_text, OnVar on_var) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    on_text(text.substr(pos, open - pos));
    on_var(trim(text.substr(open + 2, close - open - 2)), text.substr(open, close + 2 - open));
    pos = close + 2;
  }
  on_text(text.substr(pos));
}

}  // namespace

std::vector<std::string> template_variables(std::string_view text) {
  std::vector<std::string> names;
  scan(
      text, [](std::string_view) {},
      [&](std::string_view name, std::string_view) { names.emplace_back(name); });
  return names;
}

std::string render_template(std::string_view text, const TemplateVars& vars) {
  if (text.find("{{") == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  scan(
      text, [&](std::string_view literal) { out += literal; },
      [&](std::string_view name, std::string_view raw) {
        auto it = vars.find(name);
        out += it != vars.end() ? std::string_view(it->second) : raw;
      });
  return out;
}

nlohmann::json render_json_templates(const nlohmann::json& value, const TemplateVars& vars) {
  if (value.is_string()) return render_template(value.get_ref<const std::string&>(), vars);
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(render_json_templates(item, vars));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : value.items()) out[k] = render_json_templates(v, vars);
    return out;
  }
  return value;
}

}  // namespace loopr::mock_llm
