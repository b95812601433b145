// Ctrl-C while `submit --wait` or `logs -f` waits: the first SIGINT wakes the sleeping poll
// loop at once (a self-pipe) so the command can say what it left running and exit 130; the
// job is never cancelled. The handler is installed with SA_RESETHAND, so a second Ctrl-C —
// say during a request that hangs — ends the process the default way.
// The handler is installed by the first use of interruptSleeper(), not before: commands that
// do not wait keep the default SIGINT behaviour. Thread-safety: one waiting thread.
#pragma once

#include "client/poll.h"

namespace tuneplane::cli {

// The process's sleeper (installs the SIGINT handler on first use).
client::Sleeper& interruptSleeper();

}  // namespace tuneplane::cli
