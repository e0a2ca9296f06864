// Who is at the other end of a connection to a daemon (docs/security.md, B2): a daemon talks
// only to the person. A process in a loopr sandbox — of this repository or another's — is
// refused on every connection, whatever it reached (a path a person showed in a sandbox, a
// shared folder, the web UI's port from a runner class with the network).
//
// A loopr sandbox is told by its marker (kSandboxMarker, a folder on the sandbox's read-only
// root that nothing inside can remove or leave: no capability, no new namespace, no chroot),
// read through /proc/<pid>/root. A peer in the daemon's own mount namespace is never a sandbox
// of another (a daemon that itself runs in a sandbox serves the commands beside it). A peer
// that cannot be told — its process gone, or unreadable from another user namespace — is
// refused too.
#pragma once

#include <string>

namespace loopr::daemon {

struct PeerVerdict {
  bool refused = false;
  int pid = 0;      ///< the peer's process (0: not found)
  std::string why;  ///< set when refused
};

/// The verdict on the peer of connected socket `fd` (a Unix socket: SO_PEERCRED; TCP: the
/// process holding the other end, found through /proc/net/tcp{,6}).
PeerVerdict check_peer(int fd);

/// The verdict on process `pid` (the part after the socket's peer was found).
PeerVerdict check_peer_process(int pid);

}  // namespace loopr::daemon
