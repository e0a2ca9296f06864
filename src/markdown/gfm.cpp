#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>

#include <mutex>
#include <new>

#include <loopr/markdown/gfm.hpp>

namespace loopr::markdown {
namespace {

// The extension registry is process-global and some cmark-gfm versions register without a
// lock, so it happens exactly once, whichever thread parses first.
void register_extensions_once() {
  static std::once_flag once;
  std::call_once(once, [] { cmark_gfm_core_extensions_ensure_registered(); });
}

}  // namespace

NodePtr parse_gfm(std::string_view text) {
  register_extensions_once();
  ParserPtr parser(cmark_parser_new(CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8));
  if (!parser) throw std::bad_alloc();
  // Not "autolink": it only turns bare URLs into links, which changes no word and no structure
  // the artifact rules read, and its extra pass over the whole tree costs a fifth of the parse.
  for (const char* name : {"table", "tasklist", "strikethrough"}) {
    // A missing extension only makes the parser stricter (e.g. a table reads as a paragraph),
    // which the artifact rules do not depend on, so it is not an error.
    if (cmark_syntax_extension* ext = cmark_find_syntax_extension(name))
      cmark_parser_attach_syntax_extension(parser.get(), ext);
  }
  cmark_parser_feed(parser.get(), text.data(), text.size());
  NodePtr doc(cmark_parser_finish(parser.get()));
  if (!doc) throw std::bad_alloc();
  return doc;
}

}  // namespace loopr::markdown
