// The web UI's markdown renderer: parse, make the tree harmless, render in cmark's safe mode.
// The tree is changed rather than the output filtered, so what the reader sees is exactly what
// the model wrote, only inert.
#include <cctype>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <loopr/markdown/gfm.hpp>
#include <loopr/markdown/html.hpp>

namespace loopr::markdown {
namespace {

struct CFree {
  void operator()(char* p) const { std::free(p); }
};

cmark_node* new_node(cmark_node_type type) {
  cmark_node* n = cmark_node_new(type);
  if (n == nullptr) throw std::bad_alloc();
  return n;
}

cmark_node* text_node(const char* literal) {
  cmark_node* n = new_node(CMARK_NODE_TEXT);
  cmark_node_set_literal(n, literal != nullptr ? literal : "");
  return n;
}

/// Puts `replacement` where `old` is and frees `old` (and whatever children it still has).
void replace(cmark_node* old, cmark_node* replacement) {
  cmark_node_insert_before(old, replacement);
  cmark_node_free(old);
}

/// Moves every child of `from` to the end of `to`.
void move_children(cmark_node* from, cmark_node* to) {
  while (cmark_node* c = cmark_node_first_child(from)) cmark_node_append_child(to, c);
}

/// A link with a target the reader's browser must not follow: its text, then ` (target)`.
void unlink(cmark_node* link) {
  const char* url = cmark_node_get_url(link);
  std::string shown = std::string(" (") + (url != nullptr ? url : "") + ")";
  while (cmark_node* c = cmark_node_first_child(link)) cmark_node_insert_before(link, c);
  replace(link, text_node(shown.c_str()));
}

/// Rewrites the nodes that could run, load or navigate into inert ones.
void make_inert(cmark_node* root) {
  // Collect first: the tree is changed while walking it.
  std::vector<cmark_node*> nodes;
  cmark_iter* it = cmark_iter_new(root);
  for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;)
    if (ev == CMARK_EVENT_ENTER) nodes.push_back(cmark_iter_get_node(it));
  cmark_iter_free(it);
  // Children after their parents in `nodes`: walk backwards so an image inside a link is done
  // before the link moves it.
  for (auto i = nodes.rbegin(); i != nodes.rend(); ++i) {
    cmark_node* n = *i;
    switch (cmark_node_get_type(n)) {
      case CMARK_NODE_HTML_BLOCK: {
        cmark_node* code = new_node(CMARK_NODE_CODE_BLOCK);
        const char* html = cmark_node_get_literal(n);
        cmark_node_set_literal(code, html != nullptr ? html : "");
        replace(n, code);
        break;
      }
      case CMARK_NODE_HTML_INLINE:
        replace(n, text_node(cmark_node_get_literal(n)));
        break;
      case CMARK_NODE_IMAGE: {
        cmark_node* link = new_node(CMARK_NODE_LINK);
        const char* raw = cmark_node_get_url(n);
        const std::string url = raw != nullptr ? raw : "";  // `raw` dies with the image node
        cmark_node_set_url(link, url.c_str());
        cmark_node_append_child(link, text_node("image: "));
        move_children(n, link);
        replace(n, link);
        if (!is_safe_link(url)) unlink(link);
        break;
      }
      case CMARK_NODE_LINK: {
        const char* url = cmark_node_get_url(n);
        if (!is_safe_link(url != nullptr ? url : "")) unlink(n);
        break;
      }
      default:
        break;
    }
  }
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

}  // namespace

bool is_safe_link(std::string_view url) {
  while (!url.empty() && std::isspace(static_cast<unsigned char>(url.front())))
    url.remove_prefix(1);
  return starts_with_nocase(url, "http://") || starts_with_nocase(url, "https://") ||
         starts_with_nocase(url, "mailto:");
}

std::string render_safe_html(std::string_view text) {
  NodePtr doc = parse_gfm(text);
  make_inert(doc.get());
  // CMARK_OPT_DEFAULT is the safe mode: raw HTML (none is left) would be omitted and dangerous
  // URLs emptied; every literal is escaped.
  std::unique_ptr<char, CFree> html(cmark_render_html(doc.get(), CMARK_OPT_DEFAULT, nullptr));
  if (!html) throw std::bad_alloc();
  return std::string(html.get());
}

}  // namespace loopr::markdown
