// The seccomp filter every sandboxed command runs under (bwrap `--seccomp FD`): no file may get
// a setuid or setgid bit inside the sandbox, like systemd's RestrictSUIDSGID=. The worktree is
// on the host, owned by the daemon's user (root for a system daemon): a setuid file left there
// would be a way up for whoever runs it later. chmod, fchmod, fchmodat(2), mkdir(at),
// mknod(at) with S_ISUID or S_ISGID in the mode, and open, openat and creat that create a file
// with them, fail with EPERM; openat2 (whose flags seccomp cannot read) fails with ENOSYS, so
// callers fall back to openat. The kernel keyring (keyctl, add_key, request_key) and calls of
// Docker's default refusals that need no privilege to use (userfaultfd, perf_event_open, bpf,
// io_uring_*, and obsolete ones) fail with ENOSYS, so programs take their fallback. Every other
// call is allowed (docs/security.md says which of Docker's refusals and why).
#pragma once

#include <string>

namespace loopr::exec {

/// The filter as a classic BPF program (the bytes of a `struct sock_filter` array, what
/// `seccomp_export_bpf` writes and bwrap reads), for this machine's architecture (x86-64 with
/// its i386 and x32 calls, or arm64). Empty on other architectures: no filter is installed
/// there, and the sweep after each command (core/worktree_sweep.hpp) is the only line.
const std::string& suid_filter_program();

}  // namespace loopr::exec
