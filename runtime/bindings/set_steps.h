// The set loop of a plain func and its steps (docs/runtime.md, "Three loops"). A worker thread
// runs one func in the set loop (SetLoop): wait until each input channel holds a message, take
// up to a batch of input sets, hand every message taken to the func's step, then fire the sets
// one by one through the step, each set's outputs put before the next set runs, the sinks'
// consumers rung every kSetsPerRing sets and once at the end. The step is chosen once per func
// and changes only how a set is decoded, called and encoded:
//
//   LeanStep     a chain of plain single-output Python functions joined by direct calls;
//                array results never become Messages
//   UdfStep      a plain C++ UDF func, records in and out with the GIL released
//   OutputsStep  any other func whose outputs go to fixed channels: one Python call per set
//                returns its output sets, which are encoded and put here
//   MessageStep  the general path: each set as Messages to Python (`fire_set`)
//
//   step = LeanStep(region, inputs=[0], bell=1, worker=0, functions=[(4, add_one)], targets=[2], ...)
//   step.run(64)   # batches of at most 64 sets, until the region closes
#ifndef DFIR_RUNTIME_BINDINGS_SET_STEPS_H_
#define DFIR_RUNTIME_BINDINGS_SET_STEPS_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "call_watch.h"
#include "channel_io.h"
#include "py_codec.h"
#include "region.h"
#include "runtime_bindings.h"
#include "trace_log.h"

namespace dfir::bindings {

class PyRegion;

// What the set loop fires: one func's way of taking and firing its input sets.
class SetStep {
 public:
  // The step of a func reading `inputs` (its input channels, whose consumer doorbell is `bell`),
  // run by `worker`, whose outputs go to the channels `sinks` (rung by the loop).
  SetStep(const PyRegion& region, std::vector<uint32_t> inputs, uint32_t bell, uint32_t worker,
          std::vector<uint32_t> sinks);
  virtual ~SetStep() = default;
  SetStep(const SetStep&) = delete;
  SetStep& operator=(const SetStep&) = delete;

  // A batch of `sets` sets is about to be taken.
  virtual void Begin(uint64_t sets) = 0;
  // Message `j` (its input's position) of the next set of the batch, set by set.
  virtual void Take(size_t j, const rt::Taken& message) = 0;
  // Fires set `n` of the batch; false once the region closes. The worker's running node is
  // first_node() meanwhile, unless the step moves it on (a lean chain's later functions).
  virtual bool Fire(uint64_t n, GilRelease& gil) = 0;
  // Lets go of what is left of the batch (called with the GIL held, however the batch ended).
  virtual void Release() = 0;
  // The node whose func runs first (the running node while a set fires).
  virtual int32_t first_node() const = 0;

  rt::Region& region() const { return *region_; }
  const std::vector<uint32_t>& inputs() const { return inputs_; }
  uint32_t bell() const { return bell_; }
  uint32_t worker() const { return worker_; }
  const std::vector<uint32_t>& sinks() const { return sinks_; }
  // Times each set's firing with `timer` (its node's udf_timeout_ms, call_watch.h).
  void Watch(std::shared_ptr<rt::CallTimer> timer) { timer_ = std::move(timer); }
  rt::CallTimer* timer() const { return timer_.get(); }
  // Appends a slice of each set's firing to `log`, as instance `instance` of its node.
  void Trace(std::shared_ptr<rt::TraceLog> log, int32_t instance) {
    trace_ = std::move(log);
    instance_ = instance;
    lane_ = trace_->NewLane();  // the step's thread writes it alone
  }
  rt::TraceLog* trace() const { return trace_.get(); }
  int32_t instance() const { return instance_; }
  uint64_t lane() const { return lane_; }
  // Whether the step appends the slices of its functions itself (a lean chain: one per node).
  virtual bool TracesItsFunctions() const { return false; }
  // The loop's batch: each set's transaction id (for a timed or traced step) and body bytes taken
  // (for a traced one), by set; kept between batches so that a batch allocates nothing.
  std::vector<uint64_t>& batch_transactions() { return batch_transactions_; }
  std::vector<uint64_t>& batch_bytes_in() { return batch_bytes_in_; }
  // How long the step's waits for its next set take: the loop waits as it forecasts, so that a
  // node fed one message at a time finds the next one polling, not asleep; only waits of up to
  // kSetLoopHorizonNs are forecast (a worker fed seldom sleeps until rung).
  static constexpr int64_t kSetLoopHorizonNs = 1'000'000;
  rt::ArrivalForecast& forecast() { return forecast_; }
  // The begin of a traced slice: the end of the step's previous slice when nothing came between
  // (one clock read per slice in a run of traced sets or functions), else now.
  int64_t SliceBegin() const { return slice_end_ != 0 ? slice_end_ : trace_->Now(); }
  // The end of a traced slice, where the next one may begin.
  int64_t SliceEnd() { return slice_end_ = trace_->Now(); }
  // Something untraced came between: the next slice reads its own begin.
  void BreakSlices() { slice_end_ = 0; }

 protected:
  std::shared_ptr<rt::Region> region_;

 private:
  std::vector<uint32_t> inputs_;
  uint32_t bell_;
  uint32_t worker_;
  std::vector<uint32_t> sinks_;
  std::shared_ptr<rt::CallTimer> timer_;
  std::shared_ptr<rt::TraceLog> trace_;
  int32_t instance_ = 0;
  uint64_t lane_ = 0;
  int64_t slice_end_ = 0;
  std::vector<uint64_t> batch_transactions_;
  std::vector<uint64_t> batch_bytes_in_;
  rt::ArrivalForecast forecast_{kSetLoopHorizonNs};
};

// The set loop's one batch: waits up to `timeout_ms` (-1: forever) until each input of `step`
// holds a message, takes up to `max_sets` sets and fires them. The number of sets fired (0 on
// timeout); None once the region closes.
pybind11::object FireBatch(SetStep& step, uint64_t max_sets, int64_t timeout_ms);

// The set loop: batches of at most `max_sets` sets as they come, until the region closes.
void RunSetLoop(SetStep& step, uint64_t max_sets);

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_SET_STEPS_H_
