// InstanceDispatcher (runtime/native/dispatch.h): which instance of a replicated node receives
// a message (docs/runtime.md, "Instances, dispatch and gather").
#include "dispatch.h"

#include <doctest/doctest.h>

#include "shm.h"

using dfir::rt::DispatchRule;
using dfir::rt::InstanceDispatcher;

TEST_SUITE("dispatch") {

TEST_CASE("round_robin sends transaction t to instance t % N, whatever its route label") {
  InstanceDispatcher dispatcher(3, DispatchRule::kRoundRobin);
  CHECK(dispatcher.instances() == 3);
  CHECK(dispatcher.rule() == DispatchRule::kRoundRobin);
  for (uint64_t t = 0; t < 30; ++t) {
    REQUIRE(dispatcher.Route(t, 0) == t % 3);
    REQUIRE(dispatcher.Route(t, 2) == t % 3);
  }
  CHECK(dispatcher.Route(uint64_t{1} << 40, 0) == (uint64_t{1} << 40) % 3);
}

TEST_CASE("route_label sends label r to instance (r - 1) % N, an unlabelled message by transaction") {
  InstanceDispatcher dispatcher(4, DispatchRule::kRouteLabel);
  CHECK(dispatcher.Route(99, 1) == 0);
  CHECK(dispatcher.Route(99, 4) == 3);
  CHECK(dispatcher.Route(99, 5) == 0);
  CHECK(dispatcher.Route(99, 0xFFFFFFFF) == (0xFFFFFFFFu - 1) % 4);
  // Every unlabelled message of one transaction reaches the same instance.
  for (uint64_t t = 0; t < 20; ++t) REQUIRE(dispatcher.Route(t, 0) == t % 4);
}

TEST_CASE("one instance takes everything; none is a RuntimeError") {
  InstanceDispatcher single(1, DispatchRule::kRouteLabel);
  CHECK(single.Route(12345, 7) == 0);
  CHECK(single.Route(12345, 0) == 0);
  CHECK_THROWS_WITH_AS(InstanceDispatcher(0, DispatchRule::kRoundRobin),
                       "a dispatcher needs at least 1 instance, got 0", dfir::rt::RuntimeError);
}

}  // TEST_SUITE
