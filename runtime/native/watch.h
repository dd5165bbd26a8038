// Ties a worker process's life to its driver's (plain C++: no Python headers).
#ifndef DFIR_RUNTIME_NATIVE_WATCH_H_
#define DFIR_RUNTIME_NATIVE_WATCH_H_

#include <sys/types.h>

namespace dfir::rt {

// Starts a native thread that ends this process with `exit_code` (without cleanup) as soon as
// process `driver` has exited, whatever this process is doing: it needs no Python lock, so a
// worker stuck in user code still goes away with its driver.
void ExitWhenProcessEnds(pid_t driver, int exit_code);

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_WATCH_H_
