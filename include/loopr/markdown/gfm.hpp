// The parsed GitHub-flavoured markdown tree, for the markdown module's checks and for code that
// renders it (the CLI's terminal view of a plan): RAII owners for cmark-gfm handles and the one
// place that parses GFM. Nobody else calls cmark_*_free or cmark_parser_*.
#pragma once

#include <cmark-gfm.h>

#include <memory>
#include <string_view>

namespace loopr::markdown {

struct CmarkNodeFree {
  void operator()(cmark_node* node) const { cmark_node_free(node); }
};
struct CmarkParserFree {
  void operator()(cmark_parser* parser) const { cmark_parser_free(parser); }
};

/// Owns a document tree (freeing the root frees every node below it).
using NodePtr = std::unique_ptr<cmark_node, CmarkNodeFree>;
using ParserPtr = std::unique_ptr<cmark_parser, CmarkParserFree>;

/// Parses `text` as GFM (tables, task lists, strikethrough; see the .cpp for autolinks). Invalid
/// UTF-8 is replaced by U+FFFD, so every literal in the tree is valid UTF-8 (the validator reports
/// the bad bytes separately). Never fails on content; throws std::bad_alloc if cmark cannot
/// allocate.
NodePtr parse_gfm(std::string_view text);

/// `for (cmark_node* child : children(node))` over the direct children of a node.
class children {
 public:
  explicit children(cmark_node* parent) : first_(cmark_node_first_child(parent)) {}

  class iterator {
   public:
    explicit iterator(cmark_node* n) : n_(n) {}
    cmark_node* operator*() const { return n_; }
    iterator& operator++() {
      n_ = cmark_node_next(n_);
      return *this;
    }
    bool operator!=(const iterator& other) const { return n_ != other.n_; }

   private:
    cmark_node* n_;
  };

  iterator begin() const { return iterator(first_); }
  iterator end() const { return iterator(nullptr); }

 private:
  cmark_node* first_;
};

inline bool is_type(cmark_node* node, cmark_node_type type) {
  return node != nullptr && cmark_node_get_type(node) == type;
}

}  // namespace loopr::markdown
