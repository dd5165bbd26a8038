// ExitWhenProcessEnds (runtime/native/watch.h): a worker ends with its driver, whatever it does.
#include "watch.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "helpers.h"

using dfir::testing::MsSince;
using dfir::testing::StartChild;
using dfir::testing::WaitChild;

TEST_SUITE("watch") {

TEST_CASE("a watching process exits with the given code once the watched one is gone") {
  pid_t driver = StartChild([] {
    pause();
    return 0;
  });
  pid_t worker = StartChild([driver] {
    dfir::rt::ExitWhenProcessEnds(driver, 7);
    for (;;) {
    }  // busy in "user code": the watch needs nothing from this thread
    return 0;
  });
  usleep(20000);
  auto start = std::chrono::steady_clock::now();
  kill(driver, SIGKILL);
  CHECK(WaitChild(worker) == 7);
  CHECK(MsSince(start) < 10000);
  CHECK(WaitChild(driver) == 128 + SIGKILL);
}

TEST_CASE("watching a process that is already gone exits at once") {
  pid_t gone = StartChild([] { return 0; });
  REQUIRE(WaitChild(gone) == 0);
  pid_t worker = StartChild([gone] {
    dfir::rt::ExitWhenProcessEnds(gone, 9);
    pause();
    return 0;
  });
  CHECK(WaitChild(worker) == 9);
}

}  // TEST_SUITE
