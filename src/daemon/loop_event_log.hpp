// The per-loop event files: `.loopr/logs/loops/<id>/events.log`, one line per stored event
// ("<time> #<seq> <type> <data as JSON>"), appended by the daemon as each event is published.
#pragma once

#include <string>

#include <loopr/core/event.hpp>
#include <loopr/core/repo_paths.hpp>

namespace loopr::daemon {

/// The line `event` adds to its loop's events.log, with its newline.
std::string loop_event_line(const Event& event);

/// Appends `event`'s line to its loop's events.log (the folder made when missing); nothing for a
/// daemon-wide event (no loop id). One open and one write(2) of the whole line with O_APPEND, so
/// lines never interleave, and no stat walk of the folders when the file is there already: this
/// runs on the io thread for every event (~7 per iteration). A failure is dropped, as before
/// (the event itself is in the store).
void append_loop_event(const RepoPaths& paths, const Event& event);

}  // namespace loopr::daemon
