// A loaded model's shared region (runtime/native/region.h) as Python's Region: its channels'
// puts and takes in Messages or plain tensors, the native firing of a worker's funcs (lean
// chains, C++ UDFs, native sets), the firing pool's readiness scan and the workers' status.
// Declared for the driver's port (driver_port.cc), which puts and takes through it;
// region_bindings.cc holds the bodies and binds it.
#ifndef DFIR_RUNTIME_BINDINGS_PY_REGION_H_
#define DFIR_RUNTIME_BINDINGS_PY_REGION_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "channel_io.h"
#include "py_codec.h"
#include "py_ledger.h"
#include "region.h"

namespace dfir::udf {
class UdfCaller;
}  // namespace dfir::udf

namespace dfir::bindings {

// The units of a worker's firing pool (runtime/worker/executor.py): per unit, its input channels and the
// channels its outputs go to (its sinks), which must have room before it fires.
struct FiringGroups {
  std::vector<std::vector<uint32_t>> inputs;
  std::vector<std::vector<uint32_t>> sinks;
};

class PyRegion {
 public:
  PyRegion(uint32_t bells, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>& channels, uint32_t workers,
           uint64_t arena_bytes, const std::string& name);
  ~PyRegion();

  rt::Region& region() const { return *region_; }
  const std::shared_ptr<rt::Region>& shared() const { return region_; }

  // Puts each message on its channel, all or nothing (rt::PendingPut), each distinct message
  // encoded once.
  int Put(const std::vector<std::pair<uint32_t, pybind11::object>>& targets, int64_t timeout_ms, bool ring);

  // Puts one transaction of tensors without Message objects: `arrays[k]` (a numpy array, or None:
  // not fed) goes to every channel of `routes[k]` (shared channels) as Put would put
  // Message.tensor(meta, arrays[k]); `fields` is (transaction_id, start_time, end_time, flow_flags,
  // user_data). Each array is encoded once. All or nothing, statuses as Put. With a `ledger`, the
  // transaction is opened in it once it is put (not when nothing is).
  int PutArrays(const pybind11::sequence& routes, const pybind11::sequence& arrays, const pybind11::tuple& fields,
                int64_t timeout_ms, PyLedger* ledger);

  // PutArrays over native routes: `arrays[k]` (borrowed; None: not fed) to `routes[k]`.
  int PutArrayList(const std::vector<std::vector<uint32_t>>& routes, PyObject* const* arrays,
                   const rt::TransactionInfo& info, const rt::Deadline& deadline, PyLedger* ledger);

  // One set from `channels` as (fields, arrays) when every message is a plain tensor (no return
  // code, array body) of one transaction: `fields` its (transaction_id, start_time, end_time,
  // flow_flags, user_data), `arrays` one numpy array per channel; otherwise the set's Messages (a
  // list). [] on timeout; None once the region closes. Waits as Take. With a `ledger`, the
  // transaction of the first channel's message is settled in it (shared channels only).
  pybind11::object TakeTensors(const std::vector<uint32_t>& channels, uint32_t bell, int64_t timeout_ms,
                               PyLedger* ledger);

  // TakeTensors' wait and take: `arrays` (one item per channel) filled and returned for a set of
  // plain tensors, `seen(i, record)` called with each channel's record before its array is made;
  // else as TakeTensors.
  template <typename Seen>
  pybind11::object TakeTensorSet(const std::vector<uint32_t>& channels, uint32_t bell, const rt::Deadline& deadline,
                                 PyLedger* ledger, Seen&& seen, pybind11::list& arrays) {
    namespace py = pybind11;
    CheckConfigured();
    if (channels.empty()) throw rt::RuntimeError("take_tensors needs at least one channel");
    GilRelease gil;
    rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, 1, deadline, gil);
    if (ready.status == rt::WaitStatus::kClosed) return py::none();
    if (ready.sets == 0) return py::list();
    if (ledger != nullptr) rt::SettleNextSet(*region_, channels, ledger->native());
    Decoder decoder(region_);
    if (rt::NextSetIsPlainTensors(*region_, channels, Types().tensor_kind)) {
      rt::TakeSets(*region_, channels, 1, [&](size_t i, const rt::Taken& message) {
        seen(i, *message.record);
        arrays[i] = decoder.DecodeArray(*message.record);
      });
      return arrays;
    }
    py::list set(channels.size());
    rt::TakeSets(*region_, channels, 1, [&](size_t i, const rt::Taken& message) { set[i] = decoder.Take(message); });
    return set;
  }

  // Up to `max_sets` tuples holding one message from each channel, once all of them hold one;
  // [] on timeout; None once the region closes.
  pybind11::object Take(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms);

  // Fires a lean chain (runtime/worker/executor.py: plain single-output Python functions, each handing
  // its result to the next) on up to `max_sets` input sets of `channels`, waiting as Take: calls
  // the first function of `steps` ((node, fn) pairs) on each set's payloads, each next one on the
  // result, and puts the last result on every channel of `targets` before the next set runs,
  // ringing their doorbells once at the end. The output carries the transaction of the set's
  // latest input (highest id) and its first input's data label. Array results of a set of plain
  // inputs (no return code) never become Messages here; Python does the rest:
  // `emit(meta, outcome, raised, data_label, step) -> status` takes over from `steps[step]`,
  // which returned `outcome` (anything but an array) or raised it (an Exception; other
  // exceptions, MemoryError among them, propagate), and `fire_set(messages)` runs a set holding
  // an error message. `worker`'s running node is the step's node while it runs. The number of
  // sets fired; None once the region closes.
  pybind11::object FireLean(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms,
                            const std::vector<std::pair<int32_t, pybind11::object>>& steps,
                            const std::vector<uint32_t>& targets, uint32_t worker, const pybind11::object& emit,
                            const pybind11::object& fire_set);

  // Fires a plain C++ UDF func (runtime/worker/executor.py) on up to `max_sets` input sets of `channels`,
  // waiting as Take. A set of records a C++ UDF takes natively (udf::MsgOfRecord: tensors, raw
  // data, empty messages; no error) runs through `caller` as native messages over the records'
  // bodies; when the call succeeds cleanly, each output goes as a record to every channel of
  // `targets[index]` (shared channels) before the next set runs, labelled with the set's first
  // input's data label unless the UDF labelled it, and the consumers are rung as FireLean rings
  // them. Python does the rest: `fire_set(messages)` runs any other set (an error, an object, a
  // local channel's Message), `emit(output_sets, data_label)` delivers what `caller` settled for
  // a call that did not succeed cleanly. `worker`'s running node is `node` meanwhile. The number
  // of sets fired; None once the region closes.
  pybind11::object FireUdf(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms,
                           dfir::udf::UdfCaller& caller, const std::vector<std::vector<uint32_t>>& targets,
                           uint32_t worker, int32_t node, const pybind11::object& fire_set,
                           const pybind11::object& emit);

  // Fires a plain func of the general path (runtime/worker/executor.py: `_fire`, `_emit`) on up to
  // `max_sets` input sets of `channels`, waiting as Take: `run(messages)` (a list of Messages,
  // one per channel) returns the output sets, [[(port, Message)], ...]; each Message goes to every
  // channel of `targets[k]` for port `ports[k]`, labelled with the set's first input's data label
  // unless it has one, all of a set's outputs in one put, before the next set runs; the consumers
  // are rung as FireLean rings them. Python does the rest: `fire_set(messages)` runs a set holding
  // an error message (which it forwards), and `emit(output_sets, messages)` delivers output sets
  // that are not such a list, that must be relabelled for a local channel, or that cannot be
  // encoded (it fails them as the general path does). `worker`'s running node is `node`
  // meanwhile. The number of sets fired; None once the region closes.
  pybind11::object FireSets(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms,
                            const pybind11::object& run, const std::vector<uint32_t>& ports,
                            const std::vector<std::vector<uint32_t>>& targets, uint32_t worker, int32_t node,
                            const pybind11::object& fire_set, const pybind11::object& emit);

  int WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell, int64_t stalled, int64_t timeout_ms);

  // ([(unit, sets)], blocked): each unit of `groups` that can fire now, as every input holds a
  // message and every sink has room, with how many input sets (at most `limit`) it can take
  // without filling a sink; `blocked` when some unit with its inputs ready has a full sink.
  std::pair<std::vector<std::pair<uint32_t, uint64_t>>, bool> Ready(const FiringGroups& groups, uint64_t limit) const;

  int WaitForClose(uint32_t bell, int64_t timeout_ms);

  pybind11::tuple WorkerStatus(uint32_t worker) const;

  pybind11::dict ArenaStats() const;

  // The region offset of an array's bytes and the arena block holding them (0: not in the arena).
  pybind11::tuple Locate(const pybind11::object& array) const;

 private:
  // The messages FireUdf took, set by set (region_bindings.cc).
  class TakenSets;
  // A message of a lean chain's input set (region_bindings.cc).
  struct LeanInput;

  // The loop FireLean, FireUdf and FireSets share: `fire(n)` for each of `sets` taken sets (false
  // once the region closes), `worker` running `node` meanwhile, the consumers of `sinks` rung
  // every kLeanSetsPerRing sets and once at the end, however it ends. The number of sets fired;
  // None once the region closes.
  template <typename Fire>
  pybind11::object FireEach(uint64_t sets, const std::vector<uint32_t>& sinks, uint32_t worker, int32_t node,
                            Fire&& fire);

  // One set of FireSets; false once the region closes.
  bool FireSet(const pybind11::list& messages, const pybind11::object& run, const std::vector<uint32_t>& ports,
               const std::vector<std::vector<uint32_t>>& targets, const pybind11::object& fire_set,
               const pybind11::object& emit, GilRelease& gil);

  // Adds the Messages of `output_sets` to `put` as FireSets sends them; false when Python must
  // deliver them (not a list of lists of (port, Message) pairs, a relabelled message for a local
  // channel, a message that cannot be encoded).
  bool PutOutputSets(const pybind11::object& output_sets, uint32_t label, const std::vector<uint32_t>& ports,
                     const std::vector<std::vector<uint32_t>>& targets, const rt::Deadline& deadline, GilRelease& gil,
                     rt::PendingPut& put);

  // Set n of FireUdf; false once the region closes.
  bool FireUdfSet(TakenSets& taken, uint64_t n, dfir::udf::UdfCaller& caller,
                  const std::vector<std::vector<uint32_t>>& targets, const pybind11::object& fire_set,
                  const pybind11::object& emit, GilRelease& gil);

  static pybind11::object LeanMessage(LeanInput& input);

  // One set of FireLean; false once the region closes.
  bool FireLeanSet(LeanInput* set, size_t width, const std::vector<std::pair<int32_t, pybind11::object>>& steps,
                   const std::vector<uint32_t>& targets, uint32_t worker, const pybind11::object& emit,
                   const pybind11::object& fire_set, std::vector<PyObject*>& arguments, GilRelease& gil);

  // The exception being raised, taken, with its traceback (the UDF's frames name the failure).
  static pybind11::object RaisedException();

  static uint64_t TransactionIdOf(const LeanInput& input);

  static pybind11::object MetaOf(const LeanInput& input);

  // The status of a put whose encoding found no arena room in time.
  int NoRoomStatus() const;

  std::shared_ptr<rt::Region> region_;
  uint64_t epoch_ = 0;
};

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_PY_REGION_H_
