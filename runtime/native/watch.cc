#include "watch.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "shm.h"

namespace dfir::rt {

void ExitWhenProcessEnds(pid_t driver, int exit_code) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, driver, 0));
  if (pidfd < 0) {
    if (errno == ESRCH) _exit(exit_code);
    throw RuntimeError("cannot watch process " + std::to_string(driver) + ": pidfd_open failed");
  }
  std::thread([pidfd, exit_code] {
    pollfd watched{pidfd, POLLIN, 0};
    while (poll(&watched, 1, -1) < 0 && errno == EINTR) {
    }
    _exit(exit_code);
  }).detach();
}

}  // namespace dfir::rt
