// The two steps of a sandbox's start taken off the command's path (issue 32):
//  - the control group is joined while bubblewrap sets up its mounts, not before bubblewrap
//    starts: writing `cgroup.procs` waits for an RCU grace period (cgroup v1; ~0.5–1.5 ms, with
//    a long tail), bubblewrap's mounts take longer. The gate is the seccomp filter: bubblewrap
//    reads it from a pipe after its mounts and before it starts the command, and loopr writes it
//    only once the sandbox's first process is in the group (one write, smaller than PIPE_BUF, so
//    all or nothing). A daemon that dies before that write leaves an empty pipe, which
//    bubblewrap refuses ("Invalid seccomp data" / an empty filter): the command never runs
//    outside its group, nor without its filter.
//  - the network namespace comes from NetnsPool (netns_pool.hpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace loopr::exec {

/// Reads bubblewrap's `--json-status-fd` output from `fd` (non-blocking) into `text` until it
/// names the sandbox's first process (`"child-pid": N`), and returns N; -1 when bubblewrap ended
/// without naming it or `limit` passed. The caller's copy of the write end must be closed.
pid_t read_child_pid(int fd, std::string& text, std::chrono::milliseconds limit);

/// Writes `pid` to each open `cgroup.procs` in `fds`; false if one refused it.
bool join_groups(const std::vector<int>& fds, pid_t pid);

/// Writes all of `data` to `fd` in one write (the gate's filter); false if it did not go whole.
bool write_whole(int fd, const std::string& data);

}  // namespace loopr::exec
