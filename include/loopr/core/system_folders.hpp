// The system's folders every sandboxed command sees read-only (exec::make_sandbox_layout's first
// entries) and that init's toolchain detection therefore never needs to list (project/): one
// list, so the two cannot disagree about what the sandbox shows.
#pragma once

namespace loopr {

struct SystemFolder {
  const char* path;
  const char* why;  ///< what the sandbox's view says it is for (`loopr doctor`)
};

inline constexpr SystemFolder kSystemFolders[] = {
    {"/usr", "the system's programs and libraries"},
    {"/bin", "programs"},
    {"/sbin", "programs"},
    {"/lib", "libraries"},
    {"/lib32", "libraries"},
    {"/lib64", "libraries"},
    {"/libx32", "libraries"},
    {"/etc", "the system's settings (its secret files hidden)"},
};

}  // namespace loopr
