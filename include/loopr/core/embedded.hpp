// Files compiled into the binary at build time (tool schemas, shipped prompt templates), so
// loopr works from wherever it is installed. See cmake/embed_files.cmake.
#pragma once

#include <string_view>

namespace loopr {

struct EmbeddedFile {
  std::string_view name;     ///< base name, e.g. `read_file.json`
  std::string_view content;
};

}  // namespace loopr
